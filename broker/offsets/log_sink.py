"""The coordinator's `GroupStore` on the log: group and offset records appended to `__consumer_offsets`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.errors import LogError
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.partitioner import partition_for
from kafkito.broker.offsets.records import (
    GroupValue,
    MemberValue,
    OffsetValue,
    RecordFormatError,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
)
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock

if TYPE_CHECKING:
    from kafkito.broker.coordinator.group import Group
    from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
    from kafkito.broker.coordinator.store import StoreCallback
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.offsets")

OFFSETS_TOPIC = "__consumer_offsets"
_PARTITION_CACHE_SIZE = 100_000


class TimeBase:
    """Converts between the coordinator's clock (monotonic in the broker) and the epoch milliseconds
    the records carry, so stored timestamps mean what Kafka's mean and survive a restart."""

    __slots__ = ("_delta", "wall_ms")

    def __init__(self, clock: Clock, wall_ms: Callable[[], int]) -> None:
        self.wall_ms = wall_ms
        self._delta = wall_ms() - clock.now_ms()

    def to_wall(self, clock_ms: int) -> int:
        return clock_ms + self._delta

    def from_wall(self, wall_ms: int) -> int:
        return wall_ms - self._delta


def group_value(group: Group, assignment: Mapping[str, bytes], time: TimeBase) -> GroupValue:
    """The group metadata record of `group` as it stands, with the given assignment."""
    protocol = group.protocol_name
    members = tuple(
        MemberValue(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout_ms,
            m.session_timeout_ms,
            m.metadata(protocol) if protocol is not None else b"",
            assignment.get(m.member_id, b""),
        )
        for m in group.members()
    )
    state_ts = group.state_timestamp_ms
    return GroupValue(
        group.protocol_type or "",
        group.generation_id,
        protocol,
        group.leader_id,
        members,
        -1 if state_ts is None else time.to_wall(state_ts),
    )


def offset_value(offset: OffsetAndMetadata, time: TimeBase) -> OffsetValue:
    expire = offset.expire_timestamp_ms
    commit = offset.commit_timestamp_ms
    return OffsetValue(
        offset.offset,
        offset.metadata or "",
        time.to_wall(commit) if commit >= 0 else time.wall_ms(),
        offset.leader_epoch,
        None if expire is None else time.to_wall(expire),
    )


class LogGroupStore:
    """Appends each write as one batch to the group's partition; answers once the log has it.

    `PartitionLog.append` hands the bytes to the OS before returning, so an acknowledged commit
    survives a SIGKILL of the broker; `log.flush.interval.*` add fsync for power loss. Partitions in
    `loading` are being replayed: their groups are not served yet.
    """

    def __init__(self, logs: LogManager, num_partitions: int, time: TimeBase) -> None:
        self._logs = logs
        self.num_partitions = num_partitions
        self.time = time
        self.loading: set[int] = set()
        self.appends = 0
        self._partition_cache: dict[str, int] = {}

    def partition_for(self, group_id: str) -> int:
        cache = self._partition_cache
        partition = cache.get(group_id)
        if partition is None:
            if len(cache) >= _PARTITION_CACHE_SIZE:
                cache.clear()
            partition = cache[group_id] = partition_for(group_id, self.num_partitions)
        return partition

    # -- GroupStore ---------------------------------------------------------------------------

    def is_loading(self, group_id: str) -> bool:
        return bool(self.loading) and self.partition_for(group_id) in self.loading

    def is_any_loading(self) -> bool:
        return bool(self.loading)

    def store_group(self, group: Group, assignment: Mapping[str, bytes], callback: StoreCallback) -> None:
        try:
            value = encode_group_value(group_value(group, assignment, self.time))
        except RecordFormatError as exc:
            log.warning("offsets.group_record_unencodable", group=group.group_id, error=str(exc))
            callback(ErrorCode.MESSAGE_TOO_LARGE)
            return
        callback(self._append(group.group_id, [(encode_group_key(group.group_id), value)]))

    def store_offsets(
        self, group: Group, offsets: Mapping[TopicPartition, OffsetAndMetadata], callback: StoreCallback
    ) -> None:
        group_id = group.group_id
        time = self.time
        try:
            records = [
                (
                    encode_offset_key(group_id, tp.topic, tp.partition),
                    encode_offset_value(offset_value(o, time)),
                )
                for tp, o in offsets.items()
            ]
        except RecordFormatError as exc:
            log.warning("offsets.commit_unencodable", group=group_id, error=str(exc))
            callback(ErrorCode.MESSAGE_TOO_LARGE)
            return
        callback(self._append(group_id, records))

    def write_tombstones(
        self, group: Group, partitions: Collection[TopicPartition], group_tombstone: bool
    ) -> None:
        group_id = group.group_id
        records: list[tuple[bytes, bytes | None]] = [
            (encode_offset_key(group_id, tp.topic, tp.partition), None) for tp in partitions
        ]
        if group_tombstone:
            records.append((encode_group_key(group_id), None))
        if records:
            error = self._append(group_id, records)
            if error is not ErrorCode.NONE:
                # Kafka writes these with acks=0 too: nobody waits, the log line is all there is.
                log.warning("offsets.tombstones_failed", group=group_id, error=error.name)

    # -- the log ------------------------------------------------------------------------------

    def _append(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]]) -> ErrorCode:
        partition = self.partition_for(group_id)
        try:
            plog = self._logs.get_log(OFFSETS_TOPIC, partition)
            plog.append(build_batch(records, self.time.wall_ms()))
        except LogError as exc:
            log.warning("offsets.append_failed", group=group_id, partition=partition, error=exc.code.name)
            return exc.code
        except OSError as exc:
            log.error("offsets.append_io_error", group=group_id, partition=partition, error=str(exc))
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.appends += 1
        return ErrorCode.NONE
