"""The coordinator's `RecordSink` on the log: its records encoded and appended to `__consumer_offsets`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.records import (
    AppendCallback,
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.results import OffsetAndMetadata
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
    from kafkito.broker.log.manager import LogManager
    from kafkito.broker.log.partition_log import PartitionLog

log = structlog.get_logger("kafkito.offsets")

OFFSETS_TOPIC = "__consumer_offsets"
# Lower bounds of the encoded sizes, for rejecting an oversized commit before encoding it: the v2
# batch header; an offset commit record: its framing (length, attributes, timestamp and offset
# deltas, key and value lengths, header count: a byte each at least), key v1 (version, two string
# lengths, partition: 10 bytes plus the strings, whose UTF-8 is at least one byte per character) and
# value (v3: 24 bytes plus the metadata; v1: 28).
_BATCH_OVERHEAD = 61
_MIN_OFFSET_RECORD = 7 + 10 + 24
_SIZE_CHECK_FROM = 1_000  # smaller writes are cheap to encode: let the append judge them
_PARTITION_CACHE_SIZE = 100_000


def group_value(record: GroupMetadataRecord) -> GroupValue:
    """The group metadata value of `record` (its state timestamp is the broker clock's epoch ms)."""
    members = tuple(
        MemberValue(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout_ms,
            m.session_timeout_ms,
            m.subscription,
            m.assignment,
        )
        for m in record.members
    )
    state_ts = record.state_timestamp_ms
    return GroupValue(
        record.protocol_type,
        record.generation_id,
        record.protocol_name,
        record.leader_id,
        members,
        -1 if state_ts is None else state_ts,
    )


def offset_value(offset: OffsetAndMetadata, now_ms: int) -> OffsetValue:
    """The offset commit value of `offset`; a commit with no timestamp of its own (-1) is stamped now."""
    commit = offset.commit_timestamp_ms
    return OffsetValue(
        offset.offset,
        offset.metadata or "",
        commit if commit >= 0 else now_ms,
        offset.leader_epoch,
        offset.expire_timestamp_ms,
    )


def encode_record(record: CoordinatorRecord, now_ms: int) -> tuple[bytes, bytes | None]:
    """(key, value) bytes of one record in Kafka's formats, written at `now_ms` (epoch milliseconds);
    value None for a tombstone."""
    if isinstance(record, (OffsetCommitRecord, TxnOffsetCommitRecord)):
        tp = record.partition
        key = encode_offset_key(record.group_id, tp.topic, tp.partition)
        return key, encode_offset_value(offset_value(record.offset, now_ms))
    if isinstance(record, OffsetTombstone):
        return encode_offset_key(record.group_id, record.partition.topic, record.partition.partition), None
    if isinstance(record, GroupMetadataRecord):
        return encode_group_key(record.group_id), encode_group_value(group_value(record))
    if isinstance(record, TransactionMarker):
        raise RecordFormatError("a transaction marker is a control batch, written by append_marker")
    if isinstance(record, GroupTombstone):
        return encode_group_key(record.group_id), None
    # A consumer, share or streams group's record: their formats are imported by the first one written.
    from kafkito.broker.coordinator.share.records import is_share_group_record
    from kafkito.broker.coordinator.streams.records import is_streams_group_record
    from kafkito.broker.offsets.consumer_log import encode_consumer_record
    from kafkito.broker.offsets.share_records import encode_share_record

    if is_share_group_record(record):
        return encode_share_record(record)  # type: ignore[arg-type]
    if is_streams_group_record(record):
        from kafkito.broker.offsets.streams_records import encode_streams_record

        return encode_streams_record(record, now_ms)  # type: ignore[arg-type]
    return encode_consumer_record(record)  # type: ignore[arg-type]


class LogRecordSink:
    """Appends each write as one batch to the group's partition; answers once the log has it.

    `PartitionLog.append` hands the bytes to the OS before returning, so an acknowledged commit
    survives a SIGKILL of the broker; `log.flush.interval.*` add fsync for power loss. Partitions in
    `loading` are being replayed: their groups are not served yet.
    """

    def __init__(
        self,
        logs: LogManager,
        num_partitions: int,
        clock: Clock,
        create_topic: Callable[[], bool] | None = None,
    ) -> None:
        self._logs = logs
        # Creates `__consumer_offsets` before the first write when the broker started without it; once
        # only (a topic deleted later is not brought back: its writes fail as before).
        self._create_topic = create_topic
        self.num_partitions = num_partitions
        self.clock = clock  # the broker's: epoch milliseconds, as the records carry them
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

    # -- RecordSink ---------------------------------------------------------------------------

    def is_loading(self, group_id: str) -> bool:
        return bool(self.loading) and self.partition_for(group_id) in self.loading

    def is_any_loading(self) -> bool:
        return bool(self.loading)

    def is_partition_loading(self, partition: int) -> bool:
        return partition in self.loading

    def append(self, group_id: str, records: Sequence[CoordinatorRecord], done: AppendCallback) -> None:
        if self._create_topic is not None:
            self._first_write()
        now_ms = self.clock.now_ms()
        if len(records) > _SIZE_CHECK_FROM and self._surely_too_large(group_id, records):
            done(ErrorCode.MESSAGE_TOO_LARGE)
            return
        try:
            encoded = [encode_record(r, now_ms) for r in records]
        except RecordFormatError as exc:
            log.warning("offsets.record_unencodable", group=group_id, error=str(exc))
            done(ErrorCode.MESSAGE_TOO_LARGE)
            return
        first = records[0] if records else None
        producer = None
        if isinstance(first, TxnOffsetCommitRecord):
            producer = (first.producer_id, first.producer_epoch)
        done(self._append(group_id, encoded, now_ms, producer))

    def _surely_too_large(self, group_id: str, records: Sequence[CoordinatorRecord]) -> bool:
        """Whether the batch cannot fit the partition's max.message.bytes, known before encoding.

        The append would fail with MESSAGE_TOO_LARGE anyway; finding out first spares encoding a
        huge commit (100,000 partitions: half a second of the loop) only to throw it away.
        """
        try:
            limit = self._logs.get_log(OFFSETS_TOPIC, self.partition_for(group_id)).config.max_message_bytes
        except LogError:
            return False  # the append reports it
        size = _BATCH_OVERHEAD
        for record in records:
            if isinstance(record, OffsetCommitRecord):
                size += _MIN_OFFSET_RECORD + len(record.group_id) + len(record.partition.topic)
                if size > limit:
                    log.warning("offsets.commit_too_large", group=group_id, records=len(records), limit=limit)
                    return True
        return False

    # -- the log ------------------------------------------------------------------------------

    def _first_write(self) -> None:
        """Create the topic; if that fails, the write fails and the next one tries again."""
        if self._create_topic is not None and self._create_topic():
            self._create_topic = None

    def _append(
        self,
        group_id: str,
        records: Sequence[tuple[bytes, bytes | None]],
        now_ms: int,
        producer: tuple[int, int] | None = None,
    ) -> ErrorCode:
        partition = self.partition_for(group_id)
        try:
            plog = self._logs.get_log(OFFSETS_TOPIC, partition)
            batch_producer = None if producer is None else (*producer, _next_sequence(plog, *producer))
            plog.append(build_batch(records, now_ms, batch_producer))
        except LogError as exc:
            log.warning("offsets.append_failed", group=group_id, partition=partition, error=exc.code.name)
            return exc.code
        except OSError as exc:
            log.error("offsets.append_io_error", group=group_id, partition=partition, error=str(exc))
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.appends += 1
        return ErrorCode.NONE

    def append_marker(self, marker: TransactionMarker, done: AppendCallback) -> None:
        """The producer's COMMIT or ABORT control batch on the marker's partition."""
        partition = marker.offsets_partition
        if self._create_topic is not None:
            self._first_write()
        try:
            plog = self._logs.get_log(OFFSETS_TOPIC, partition)
            plog.append_marker(marker.producer_id, marker.producer_epoch, marker.commit)
        except LogError as exc:
            log.warning("offsets.marker_failed", partition=partition, error=exc.code.name)
            done(exc.code)
            return
        except OSError as exc:
            log.error("offsets.marker_io_error", partition=partition, error=str(exc))
            done(ErrorCode.KAFKA_STORAGE_ERROR)
            return
        self.appends += 1
        done(ErrorCode.NONE)


def _next_sequence(plog: PartitionLog, producer_id: int, producer_epoch: int) -> int:
    """The base sequence of the producer's next batch on this partition.

    Kafka's coordinator appends with sequence checks off; this log checks every producer batch, so
    the coordinator continues the sequence the partition already holds for that producer and epoch
    (0 when it holds none): consecutive TxnOffsetCommits are never taken for retries.
    """
    entry = plog.producers.entry(producer_id)
    if entry is None or entry.epoch != producer_epoch or entry.last_seq < 0:
        return 0
    return (entry.last_seq + 1) & 0x7FFFFFFF
