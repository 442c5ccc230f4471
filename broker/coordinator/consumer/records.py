"""The records of a KIP-848 consumer group, typed, one per Kafka record type of `__consumer_offsets`.

Consumer-group records are the truth at run time as well as on load: a consumer group changes only
by `GroupCoordinator.replay` of these records (Kafka's design), so a restart is a replay.

An assignment is stored as `Assignment`: a tuple of `(topic_id, partitions)` pairs sorted by topic
id, each partitions tuple sorted, no topic with an empty tuple. It is hashable and compares equal
for equal assignments, so records compare by value; `to_assignment`/`from_assignment` convert from
and to the `Mapping[uuid.UUID, frozenset[int]]` the group model and the assignors use.

A Kafka tombstone (null value) is its own `...Tombstone` NamedTuple holding the key fields only.
Being tuples, records of different types with the same fields compare equal (two tombstones of one
member, say): route and compare them by `type(record)` first, never by equality alone.
Timestamps (`timestamp_ms`) are on the coordinator's clock, as every coordinator record.
The key type of each record in `__consumer_offsets` is in the class docstring.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import NamedTuple

Assignment = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]
EMPTY_ASSIGNMENT: Assignment = ()


def to_assignment(partitions: Mapping[uuid.UUID, Iterable[int]]) -> Assignment:
    """The canonical (sorted, no empty topic) tuple form of an assignment."""
    return tuple(
        (topic_id, tuple(sorted(parts)))
        for topic_id, parts in sorted(partitions.items(), key=lambda item: item[0].bytes)
        if parts
    )


def from_assignment(assignment: Assignment) -> dict[uuid.UUID, frozenset[int]]:
    """The mapping form of an assignment (topic id to its partitions)."""
    return {topic_id: frozenset(parts) for topic_id, parts in assignment if parts}


class ConsumerGroupMetadataRecord(NamedTuple):
    """The group epoch and the hash of the subscribed topics' metadata (key type 3; Kafka 4.1's
    metadata hash is written instead of ConsumerGroupPartitionMetadata)."""

    group_id: str
    epoch: int
    metadata_hash: int = 0


class ClassicMemberMetadata(NamedTuple):
    """What a classic member inside a consumer group keeps: its session timeout and protocols."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


class ConsumerGroupMemberRecord(NamedTuple):
    """A member's metadata: who it is and what it subscribes to (key type 5)."""

    group_id: str
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member: ClassicMemberMetadata | None = None


class ConsumerGroupTargetAssignmentMetadataRecord(NamedTuple):
    """The epoch of the group's target assignment and the broker time it was computed at (key type 6)."""

    group_id: str
    assignment_epoch: int
    assignment_timestamp_ms: int = 0


class ConsumerGroupTargetAssignmentMemberRecord(NamedTuple):
    """One member's target assignment (key type 7)."""

    group_id: str
    member_id: str
    assignment: Assignment


class ConsumerGroupCurrentAssignmentRecord(NamedTuple):
    """A member's reconciliation state: its epochs, state (`MemberState` value), the partitions it
    may own and those it must still revoke (key type 8)."""

    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: Assignment
    pending_revocation: Assignment


class ConsumerGroupRegexRecord(NamedTuple):
    """A resolved subscription regular expression: the topics it matched at `version`, the topics
    image version (kafkito: the coordinator's topics-change counter) (key type 16)."""

    group_id: str
    regex: str
    topics: tuple[str, ...]
    version: int
    timestamp_ms: int


class ConsumerGroupPartitionMetadataRecord(NamedTuple):
    """Kafka 4.0's subscribed topic metadata (key type 4): read, never written by kafkito (the
    metadata hash of the group record replaces it). `topics` is (topic id, name, partitions)."""

    group_id: str
    topics: tuple[tuple[uuid.UUID, str, int], ...]


class ConsumerGroupMetadataTombstone(NamedTuple):
    group_id: str


class ConsumerGroupMemberTombstone(NamedTuple):
    group_id: str
    member_id: str


class ConsumerGroupTargetAssignmentMetadataTombstone(NamedTuple):
    group_id: str


class ConsumerGroupTargetAssignmentMemberTombstone(NamedTuple):
    group_id: str
    member_id: str


class ConsumerGroupCurrentAssignmentTombstone(NamedTuple):
    group_id: str
    member_id: str


class ConsumerGroupRegexTombstone(NamedTuple):
    group_id: str
    regex: str


class ConsumerGroupPartitionMetadataTombstone(NamedTuple):
    group_id: str


ConsumerGroupRecord = (
    ConsumerGroupMetadataRecord
    | ConsumerGroupMemberRecord
    | ConsumerGroupTargetAssignmentMetadataRecord
    | ConsumerGroupTargetAssignmentMemberRecord
    | ConsumerGroupCurrentAssignmentRecord
    | ConsumerGroupRegexRecord
    | ConsumerGroupPartitionMetadataRecord
    | ConsumerGroupMetadataTombstone
    | ConsumerGroupMemberTombstone
    | ConsumerGroupTargetAssignmentMetadataTombstone
    | ConsumerGroupTargetAssignmentMemberTombstone
    | ConsumerGroupCurrentAssignmentTombstone
    | ConsumerGroupRegexTombstone
    | ConsumerGroupPartitionMetadataTombstone
)

CONSUMER_GROUP_RECORD_TYPES: tuple[type, ...] = (
    ConsumerGroupMetadataRecord,
    ConsumerGroupMemberRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupRegexTombstone,
    ConsumerGroupPartitionMetadataTombstone,
)
"""Every consumer-group record class (`isinstance(record, CONSUMER_GROUP_RECORD_TYPES)` routes them)."""
