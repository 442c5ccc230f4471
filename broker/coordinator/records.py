"""What the coordinator writes: typed records of `__consumer_offsets`, and a write's result.

The coordinator speaks these records in its own clock's milliseconds; the log shell
(`broker.group_log`) encodes them in Kafka's formats (wall-clock timestamps) and decodes them back
on load. `GroupCoordinator.replay` applies any of them, at load and at run time.

Records are NamedTuples (~50 µs to define, against ~330 µs for a frozen slotted dataclass: the broker
imports them at every start). `GroupTombstone` stays a dataclass: as a 1-tuple it would equal
`ConsumerGroupMetadataTombstone` of the same group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:  # their formats are imported by the first record of their type (~3 ms a start)
    from kafkito.broker.coordinator.consumer.records import ConsumerGroupRecord
    from kafkito.broker.coordinator.share.records import ShareGroupRecord


class OffsetCommitRecord(NamedTuple):
    """A committed offset (a tuple: one commit can carry many thousands of them)."""

    group_id: str
    partition: TopicPartition
    offset: OffsetAndMetadata


class TxnOffsetCommitRecord(NamedTuple):
    """An offset committed inside a transaction (TxnOffsetCommit): written in the producer's
    transactional batch, pending until that producer's COMMIT or ABORT marker on the same partition."""

    group_id: str
    partition: TopicPartition
    offset: OffsetAndMetadata
    producer_id: int
    producer_epoch: int


class OffsetTombstone(NamedTuple):
    group_id: str
    partition: TopicPartition


class MemberMetadata(NamedTuple):
    """One member as the group record stores it: the chosen protocol's metadata and its assignment."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


class GroupMetadataRecord(NamedTuple):
    """A classic group's durable snapshot, written when it turns Stable or Empty (or a static member is
    replaced). `state_timestamp_ms` is on the coordinator's clock, None when unknown."""

    group_id: str
    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberMetadata, ...] = ()
    state_timestamp_ms: int | None = None


@dataclass(slots=True, frozen=True)
class GroupTombstone:
    group_id: str


class TransactionMarker(NamedTuple):
    """A COMMIT or ABORT control record on `__consumer_offsets` partition `offsets_partition`: it ends
    the producer's pending offsets of every group on that partition. Written by
    `GroupCoordinator.complete_transaction`, never through `RecordSink.append`."""

    offsets_partition: int
    producer_id: int
    producer_epoch: int
    commit: bool


# A name for annotations only (a string at run time): the group types' records are not imported for it.
CoordinatorRecord: TypeAlias = (
    "OffsetCommitRecord | TxnOffsetCommitRecord | OffsetTombstone | GroupMetadataRecord | GroupTombstone"
    " | TransactionMarker | ConsumerGroupRecord | ShareGroupRecord"
)
AppendCallback = Callable[[ErrorCode], None]


class CoordinatorResult(NamedTuple):
    """A write: the records to append to the group's partition, and what answers once they are in.

    `respond` gets the append error (NONE on success) and sends the response(s); it runs only after
    the append. Who applies the records to the coordinator's state (`GroupCoordinator.replay`):
    - offset commits: `respond`, once written, for the partitions no later delete superseded;
    - transactional offset commits: `respond`, once written, into the producer's pending offsets;
    - tombstones: the writer, as they are written (Kafka writes them without waiting, too);
    - a classic group record: nobody at run time, as in Kafka: the group's rebalance state was changed
      directly, and the record is its durable snapshot, replayed only on load.
    """

    group_id: str
    records: Sequence[CoordinatorRecord]
    respond: AppendCallback
