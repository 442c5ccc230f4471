"""The log of one topic-partition as producers write it: offsets assigned on append, idempotence,
transactions (markers, the last stable offset, the aborted index); the segments are `SegmentedLog`'s."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kafkito.broker.log.append_checks import check_records
from kafkito.broker.log.batch import CONTROL_MASK, BatchHeader, split_batches
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.control import marker_batch
from kafkito.broker.log.errors import InvalidRecord, RecordListTooLarge
from kafkito.broker.log.producer_state import ProducerSnapshot, ProducerStateManager
from kafkito.broker.log.segment import ScanError, Segment
from kafkito.broker.log.segmented_log import SegmentedLog, wall_clock_ms
from kafkito.broker.log.stamp import assign_offsets, stamp_batches
from kafkito.broker.log.storage import LogDirHealth, storage_guarded
from kafkito.broker.log.timestamps import TimestampOffset
from kafkito.broker.log.txn_index import AbortedTxn
from kafkito.broker.log.txn_log import TxnLog


class AppendInfo(NamedTuple):
    """What a Produce response needs about one partition's append."""

    base_offset: int
    last_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    record_count: int
    duplicate: bool = False


class PartitionLog(SegmentedLog):
    """A partition's batches, stored as the producer sent them.

    Offsets are assigned by patching each batch's base offset in place; nothing is decompressed or
    re-encoded on append or read. `producers` holds the producer state replayed from the log.
    """

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        *,
        topic: str = "",
        partition: int = 0,
        time_ms: Callable[[], int] = wall_clock_ms,
        leader_epoch: int = 0,
        on_append: Callable[[], None] | None = None,
        dir_health: LogDirHealth | None = None,
        new: bool = False,
    ) -> None:
        self._on_append = on_append
        self.producers = ProducerStateManager()
        self._txns = TxnLog(Path(directory), self.producers)
        super().__init__(
            directory,
            config,
            topic=topic,
            partition=partition,
            time_ms=time_ms,
            leader_epoch=leader_epoch,
            dir_health=dir_health,
            new=new,
        )

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, or the high watermark when none is."""
        return self._txns.last_stable_offset(self._log_start_offset, self.log_end_offset)

    # -- append --------------------------------------------------------------------------------

    @storage_guarded
    def append(self, records: bytes | bytearray | memoryview, *, now_ms: int | None = None) -> AppendInfo:
        """Validate, assign offsets to and store a produce request's batches for this partition.

        The bytes are on their way to disk (written to the OS) when this returns. A retried batch of
        an idempotent producer is acknowledged with its original offsets and not stored again.
        """
        self._ensure_open()
        config = self.config
        batches = split_batches(records, max_batch_bytes=config.max_message_bytes)
        if not batches:
            return AppendInfo(-1, -1, -1, self._log_start_offset, 0)
        headers = [h for _, h in batches]
        if any(h.attributes & CONTROL_MASK for h in headers):
            raise InvalidRecord("clients may not write control batches")
        duplicate = self.producers.find_duplicate(headers)
        if duplicate is not None:
            self._log.debug("log.duplicate_batch", base_offset=duplicate.base_offset)
            return AppendInfo(
                duplicate.base_offset,
                duplicate.last_offset,
                duplicate.timestamp if config.log_append_time else -1,
                self._log_start_offset,
                duplicate.last_offset - duplicate.base_offset + 1,
                duplicate=True,
            )
        now = self._time_ms() if now_ms is None else now_ms
        check_records(records, batches, now, config, f"{self.topic}-{self.partition}")
        self.producers.validate(headers)
        total = batches[-1][0] + headers[-1].size
        if total > config.segment_bytes:
            raise RecordListTooLarge(f"{total} bytes of records exceed segment.bytes {config.segment_bytes}")

        base = self.log_end_offset
        append_time = now if config.log_append_time else -1
        if append_time >= 0:  # LogAppendTime rewrites timestamps and CRCs: a stamped copy is written
            buf = bytearray(records)
            stored, next_offset = stamp_batches(buf, batches, base, self.leader_epoch, append_time)
            segment = self._maybe_roll(total, max(ts for _, _, ts in stored), now)
            segment.append(buf)
        else:  # CreateTime: the records as sent, offsets and epoch stamped as they are written
            stored, placed, next_offset = assign_offsets(batches, base)
            segment = self._maybe_roll(total, max(ts for _, _, ts in stored), now)
            segment.append_stamped(records, placed, self.leader_epoch)
        for header, offset, timestamp in stored:
            self.producers.record(header, offset, timestamp)
        self._maybe_flush(now)
        if self._on_append is not None:
            self._on_append()
        return AppendInfo(base, next_offset - 1, append_time, self._log_start_offset, next_offset - base)

    @storage_guarded
    def append_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int = 0
    ) -> int:
        """Write a COMMIT or ABORT control batch ending the producer's transaction; its offset.

        Written even when the producer has no open transaction here, as Kafka does. Raises
        INVALID_PRODUCER_EPOCH for a fenced producer epoch, TRANSACTION_COORDINATOR_FENCED for an
        older coordinator epoch than the last marker's.
        """
        self._ensure_open()
        self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch)
        now = self._time_ms()
        buf = marker_batch(producer_id, producer_epoch, commit, coordinator_epoch, now)
        offset = self.log_end_offset
        append_time = now if self.config.log_append_time else -1
        stored, _ = stamp_batches(buf, split_batches(buf), offset, self.leader_epoch, append_time)
        header, _, timestamp = stored[0]
        segment = self._maybe_roll(len(buf), timestamp, now)
        segment.append(buf)
        entry = self._txns.ended(header, offset, timestamp, commit, coordinator_epoch)
        if entry is not None:
            self._txns.appended(entry, segment)
        self._log.debug("log.marker_written", offset=offset, producer_id=producer_id, commit=commit)
        self._maybe_flush(now)
        if self._on_append is not None:
            self._on_append()
        return offset

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of every aborted transaction overlapping [start, end) (Fetch)."""
        return [(e.producer_id, e.first_offset) for e in self._txns.aborted.overlapping(start, end)]

    def aborted_entries(self, start: int, end: int) -> list[AbortedTxn]:
        """The aborted-index entries overlapping [start, end), with their markers' offsets (cleaner)."""
        return self._txns.aborted.overlapping(start, end)

    def producer_snapshot(self) -> list[ProducerSnapshot]:
        """Every producer this partition remembers, as DescribeProducers reports them."""
        return self.producers.snapshot()

    # -- producer state, kept current by SegmentedLog's hooks ----------------------------------

    def _replay_batch(self, segment: Segment, position: int, header: BatchHeader) -> None:
        self._txns.replay(segment, position, header)

    def _state_reset(self) -> None:
        self._txns.clear()

    def _state_rebuilt(self) -> None:
        self._txns.sync_files(self._segments)

    def _segments_deleted(self) -> None:
        self._txns.aborted.drop_below(self._segments[0].base_offset)

    def _expire(self, now_ms: int) -> None:
        self.producers.expire(now_ms, self.config.producer_id_expiration_ms)


__all__ = ["AppendInfo", "PartitionLog", "ScanError", "TimestampOffset", "wall_clock_ms"]
