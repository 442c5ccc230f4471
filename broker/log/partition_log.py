"""The log of one topic-partition: ordered segments, append with offset assignment, reads, retention."""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.batch import (
    HEADER_SIZE,
    BatchHeader,
    parse_header,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    split_batches,
)
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.errors import (
    InvalidRecord,
    InvalidTimestamp,
    OffsetOutOfRange,
    RecordListTooLarge,
    UnknownTopicOrPartition,
)
from kafkito.broker.log.producer_state import ProducerStateManager
from kafkito.broker.log.segment import SUFFIX, ScanError, Segment

if TYPE_CHECKING:
    from kafkito.broker.log.cleaner import CleanPlan

log = structlog.get_logger(__name__)

CLEAN_SHUTDOWN_FILE = ".clean-shutdown"
LOG_START_OFFSET_FILE = "log-start-offset"
CLEANER_OFFSET_FILE = "cleaner-offset"


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class AppendInfo:
    """What a Produce response needs about one partition's append."""

    base_offset: int
    last_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    record_count: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A ListOffsets answer: the record's timestamp and offset."""

    timestamp: int
    offset: int


def _check_timestamps(headers: list[BatchHeader], now_ms: int, config: LogConfig) -> None:
    """message.timestamp.{before,after}.max.ms for CreateTime topics, judged from batch headers."""
    for header in headers:
        if header.max_timestamp - now_ms > config.message_timestamp_after_max_ms:
            raise InvalidTimestamp(
                f"timestamp {header.max_timestamp} is more than message.timestamp.after.max.ms "
                f"{config.message_timestamp_after_max_ms} ahead of the broker time {now_ms}"
            )
        if now_ms - header.base_timestamp > config.message_timestamp_before_max_ms:
            raise InvalidTimestamp(
                f"timestamp {header.base_timestamp} is more than message.timestamp.before.max.ms "
                f"{config.message_timestamp_before_max_ms} behind the broker time {now_ms}"
            )


def _check_keys(records: bytes | bytearray | memoryview, batches: list[tuple[int, BatchHeader]]) -> None:
    """Compacted topics need a key on every record; this decodes, so it only runs for them."""
    from kafka.record.default_records import DefaultRecordBatch

    view = memoryview(records)
    for pos, header in batches:
        for record in DefaultRecordBatch(view[pos : pos + header.size]):
            if record.key is None:
                raise InvalidRecord("compacted topic cannot accept a record without a key")


class PartitionLog:
    """Segments of magic-v2 batches under `<data>/<topic>-<partition>/`, stored as the producer sent them.

    Offsets are assigned by patching each batch's base offset in place; nothing is decompressed or
    re-encoded on append or read. One replica, so the high watermark is the log end offset.
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
    ) -> None:
        self.directory = Path(directory)
        self.topic = topic
        self.partition = partition
        self.config = config
        self.leader_epoch = leader_epoch
        self._time_ms = time_ms
        self._on_append = on_append
        self._log = log.bind(topic=topic, partition=partition)
        self._segments: list[Segment] = []
        self._segment_bases: list[int] = []
        self.producers = ProducerStateManager()
        self._log_start_offset = 0
        self._cleaner_offset = 0
        self._flushed_offset = 0
        self._last_flush_ms = time_ms()
        self._closed = False
        self.directory.mkdir(parents=True, exist_ok=True)
        self._open()

    # -- opening and recovery ------------------------------------------------------------------

    def _open(self) -> None:
        marker = self.directory / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        marker.unlink(missing_ok=True)
        now = self._time_ms()
        for pattern in ("*.tmp", "*.cleaned"):  # half-written checkpoints, unfinished compactions
            for stray in self.directory.glob(pattern):
                stray.unlink()
        files = sorted(
            (int(p.name[: -len(SUFFIX)]), p)
            for p in self.directory.glob(f"*{SUFFIX}")
            if p.name[: -len(SUFFIX)].isdigit()
        )
        for i, (base, path) in enumerate(files):
            segment = Segment(path, base, self.config.index_interval_bytes, now)
            is_last = i == len(files) - 1
            # A crash can only tear the segment being written; the others get a header walk. The
            # active one is CRC-checked even after a clean shutdown: a file edited while we were
            # down must not be served either.
            problem = segment.recover(check_crc=is_last, on_batch=self._replay_batch)
            self._segments.append(segment)
            if problem is not None:
                self._log.warning(
                    "log.truncated_invalid_tail",
                    segment=path.name,
                    position=problem.position,
                    reason=problem.reason,
                    clean_shutdown=clean,
                )
                for _, later in files[i + 1 :]:
                    self._log.warning("log.deleted_segment_after_corruption", segment=later.name)
                    later.unlink()
                break
        if not self._segments:
            self._segments.append(Segment.create(self.directory, 0, self.config.index_interval_bytes, now))
        self._segment_bases = [s.base_offset for s in self._segments]
        stored_start = self._read_offset_file(LOG_START_OFFSET_FILE)
        self._cleaner_offset = self._read_offset_file(CLEANER_OFFSET_FILE)
        self._log_start_offset = min(max(stored_start, self._segments[0].base_offset), self.log_end_offset)
        self._flushed_offset = self.log_end_offset if clean else 0
        self._log.debug(
            "log.opened",
            segments=len(self._segments),
            log_start_offset=self._log_start_offset,
            log_end_offset=self.log_end_offset,
            clean_shutdown=clean,
        )

    def _replay_batch(self, header: BatchHeader) -> None:
        self.producers.record(header, header.base_offset, header.max_timestamp)

    def _read_offset_file(self, name: str) -> int:
        try:
            return int((self.directory / name).read_text().strip())
        except (FileNotFoundError, ValueError):
            return 0

    def _write_offset_file(self, name: str, offset: int) -> None:
        path = self.directory / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(f"{offset}\n")
        os.replace(tmp, path)

    def _write_log_start_offset(self) -> None:
        self._write_offset_file(LOG_START_OFFSET_FILE, self._log_start_offset)

    # -- offsets -------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log_end_offset

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def segments(self) -> list[Segment]:
        """The live segments, oldest first (read-only use: tests, the cleaner)."""
        return list(self._segments)

    # -- append --------------------------------------------------------------------------------

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
        if config.compact:
            _check_keys(records, batches)
        self.producers.validate(headers)
        total = batches[-1][0] + headers[-1].size
        if total > config.segment_bytes:
            raise RecordListTooLarge(f"{total} bytes of records exceed segment.bytes {config.segment_bytes}")

        now = self._time_ms() if now_ms is None else now_ms
        if not config.log_append_time:
            _check_timestamps(headers, now, config)
        buf = bytearray(records)
        base = next_offset = self.log_end_offset
        append_time = now if config.log_append_time else -1
        stored: list[tuple[BatchHeader, int, int]] = []
        for pos, header in batches:
            set_base_offset(buf, pos, next_offset)
            set_partition_leader_epoch(buf, pos, self.leader_epoch)
            timestamp = header.max_timestamp
            if config.log_append_time:
                set_log_append_time(buf, pos, header.size, now)
                timestamp = now
            stored.append((header, next_offset, timestamp))
            next_offset += header.last_offset_delta + 1

        segment = self._maybe_roll(total, max(ts for _, _, ts in stored), now)
        segment.append(buf)
        for header, offset, timestamp in stored:
            self.producers.record(header, offset, timestamp)
        self._maybe_flush(now)
        if self._on_append is not None:
            self._on_append()
        return AppendInfo(base, next_offset - 1, append_time, self._log_start_offset, next_offset - base)

    def _maybe_roll(self, incoming_bytes: int, incoming_max_ts: int, now_ms: int) -> Segment:
        active = self._segments[-1]
        if active.is_empty:
            return active
        too_big = active.size + incoming_bytes > self.config.segment_bytes
        # As in Kafka, segment.ms compares record time with the first batch's time when both exist.
        if active.first_batch_timestamp >= 0:
            waited = incoming_max_ts - active.first_batch_timestamp
        else:
            waited = now_ms - active.created_ms
        too_old = waited > self.config.segment_ms
        if too_big or too_old:
            return self.roll(now_ms)
        return active

    def roll(self, now_ms: int | None = None) -> Segment:
        """Start a new active segment at the log end offset (no-op if the active one is empty)."""
        active = self._segments[-1]
        if active.is_empty:
            return active
        now = self._time_ms() if now_ms is None else now_ms
        segment = Segment.create(self.directory, self.log_end_offset, self.config.index_interval_bytes, now)
        self._segments.append(segment)
        self._segment_bases.append(segment.base_offset)
        self._log.debug("log.rolled", base_offset=segment.base_offset)
        return segment

    # -- flush ---------------------------------------------------------------------------------

    def _maybe_flush(self, now_ms: int) -> None:
        config = self.config
        if (
            self.log_end_offset - self._flushed_offset >= config.flush_messages
            or now_ms - self._last_flush_ms >= config.flush_ms
        ):
            self.flush(now_ms)

    def maybe_flush(self, now_ms: int) -> None:
        """Fsync if `flush.ms` has elapsed since the last flush and there is something to flush."""
        due = now_ms - self._last_flush_ms >= self.config.flush_ms
        if due and self._flushed_offset < self.log_end_offset:
            self.flush(now_ms)

    def flush(self, now_ms: int | None = None) -> None:
        """Fsync every segment that may hold unflushed batches."""
        for segment in self._segments:
            if segment.next_offset > self._flushed_offset:
                segment.flush()
        self._flushed_offset = self.log_end_offset
        self._last_flush_ms = self._time_ms() if now_ms is None else now_ms

    # -- read ----------------------------------------------------------------------------------

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        """Whole batches starting with the one holding `fetch_offset`, up to `max_bytes`.

        The first batch is returned whole even if it is larger than `max_bytes` (so a consumer
        always progresses); later batches stop before one that would exceed it. Batches at or
        beyond `max_offset` (exclusive) are left out. Reads stay within one segment, as Kafka's do.
        Raises OffsetOutOfRange outside [log start offset, log end offset].
        """
        self._ensure_open()
        end_offset = self.log_end_offset
        if fetch_offset < self._log_start_offset or fetch_offset > end_offset:
            raise OffsetOutOfRange(
                f"offset {fetch_offset} is outside [{self._log_start_offset}, {end_offset}] "
                f"of {self.topic}-{self.partition}"
            )
        if fetch_offset == end_offset or (max_offset is not None and fetch_offset >= max_offset):
            return b""
        i = max(bisect_right(self._segment_bases, fetch_offset) - 1, 0)
        for segment in self._segments[i:]:
            found = segment.find(fetch_offset)
            if found is None:
                continue
            position, first = found
            if max_offset is not None and first.base_offset >= max_offset:
                return b""
            end = segment.end_of_read(position, first, max_bytes, max_offset)
            return segment.read(position, end - position)
        return b""

    def batch_headers(self, start_offset: int = 0) -> list[BatchHeader]:
        """Headers of all stored batches from the one holding `start_offset` (tests and tools)."""
        out: list[BatchHeader] = []
        i = max(bisect_right(self._segment_bases, start_offset) - 1, 0)
        for segment in self._segments[i:]:
            found = segment.find(start_offset)
            if found is None:
                continue
            out.extend(h for _, h in segment.batches(found[0]))
        return out

    # -- list offsets --------------------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first record with timestamp >= `timestamp` at or after the log start (ListOffsets), or None."""
        start = self._log_start_offset
        for segment in self._segments:
            found = segment.find_by_timestamp(timestamp)
            if found is None:
                continue
            for position, header in segment.batches(found[0]):
                if header.max_timestamp < timestamp or header.last_offset < start:
                    continue
                for record_ts, offset in self._record_timestamps(segment, position, header):
                    if record_ts >= timestamp and offset >= start:
                        return TimestampOffset(record_ts, offset)
        return None

    def max_timestamp_offset(self) -> TimestampOffset | None:
        """The record with the largest timestamp (ListOffsets MAX_TIMESTAMP), earliest on ties."""
        best: tuple[Segment, int] | None = None
        best_ts = -1
        for segment in self._segments:
            if segment.max_timestamp > best_ts and segment.max_timestamp_position >= 0:
                best, best_ts = (segment, segment.max_timestamp_position), segment.max_timestamp
        if best is None:
            return None
        segment, position = best
        header = parse_header(segment.read(position, HEADER_SIZE))
        for record_ts, offset in self._record_timestamps(segment, position, header):
            if record_ts == best_ts:
                return TimestampOffset(record_ts, offset)
        return TimestampOffset(best_ts, header.last_offset)

    def _record_timestamps(
        self, segment: Segment, position: int, header: BatchHeader
    ) -> list[tuple[int, int]]:
        """(timestamp, offset) of each record in a stored batch; decodes it (off the hot path)."""
        if header.is_log_append_time:
            count = header.last_offset_delta + 1
            return [(header.max_timestamp, header.base_offset + i) for i in range(count)]
        from kafka.record.default_records import DefaultRecordBatch

        batch = DefaultRecordBatch(segment.read(position, header.size))
        return [(record.timestamp, record.offset) for record in batch]

    # -- retention and deletion ----------------------------------------------------------------

    def delete_records(self, before_offset: int) -> int:
        """DeleteRecords: move the log start offset to `before_offset` (-1 = high watermark)."""
        self._ensure_open()
        target = self.high_watermark if before_offset == -1 else before_offset
        if target < 0 or target > self.high_watermark:
            raise OffsetOutOfRange(
                f"cannot delete before offset {before_offset}: high watermark is {self.high_watermark}"
            )
        if target > self._log_start_offset:
            self._log_start_offset = target
            self._write_log_start_offset()
            self._delete_prefix(self._below_log_start)
            self._log.info("log.start_offset_moved", log_start_offset=target)
        return self._log_start_offset

    def maybe_enforce_retention(self, now_ms: int | None = None) -> int:
        """Delete whole old segments past retention.ms / retention.bytes; returns how many went."""
        now = self._time_ms() if now_ms is None else now_ms
        config = self.config
        self.producers.expire(now, config.producer_id_expiration_ms)
        deleted = self._delete_prefix(self._below_log_start)
        if not config.delete:
            return deleted
        if config.retention_ms >= 0:
            deleted += self._delete_prefix(lambda seg, nxt: now - seg.largest_timestamp > config.retention_ms)
        if config.retention_bytes >= 0:
            excess = self.size_bytes - config.retention_bytes

            def over_size(seg: Segment, nxt: Segment | None) -> bool:
                nonlocal excess
                if excess - seg.size >= 0:
                    excess -= seg.size
                    return True
                return False

            deleted += self._delete_prefix(over_size)
        return deleted

    def _below_log_start(self, segment: Segment, nxt: Segment | None) -> bool:
        return nxt is not None and nxt.base_offset <= self._log_start_offset

    def _delete_prefix(self, predicate: Callable[[Segment, Segment | None], bool]) -> int:
        """Delete the oldest segments while `predicate(segment, next_segment)` holds.

        The active segment may go too if it has data: a fresh one is rolled at the log end first.
        """
        doomed: list[Segment] = []
        for i, segment in enumerate(self._segments):
            nxt = self._segments[i + 1] if i + 1 < len(self._segments) else None
            if nxt is None and segment.is_empty:
                break
            if not predicate(segment, nxt):
                break
            doomed.append(segment)
        if not doomed:
            return 0
        if len(doomed) == len(self._segments):
            self.roll()
        for segment in doomed:
            self._log.info(
                "log.segment_deleted", base_offset=segment.base_offset, next_offset=segment.next_offset
            )
            segment.delete()
        self._segments = self._segments[len(doomed) :]
        self._segment_bases = [s.base_offset for s in self._segments]
        if self._segments[0].base_offset > self._log_start_offset:
            self._log_start_offset = self._segments[0].base_offset
            self._write_log_start_offset()
        return len(doomed)

    def truncate_to(self, offset: int) -> None:
        """Drop every batch holding offsets >= `offset` (whole batches); the log end moves back."""
        if offset >= self.log_end_offset:
            return
        now = self._time_ms()
        if offset <= self._segments[0].base_offset:
            for segment in self._segments:
                segment.delete()
            self._segments = [Segment.create(self.directory, offset, self.config.index_interval_bytes, now)]
        else:
            keep: list[Segment] = []
            for segment in self._segments:
                if segment.base_offset >= offset:
                    segment.delete()
                    continue
                keep.append(segment)
                found = segment.find(offset)
                if found is not None:
                    segment.truncate_to_position(found[0])
            self._segments = keep
        self._segment_bases = [s.base_offset for s in self._segments]
        self._log_start_offset = min(self._log_start_offset, self.log_end_offset)
        self._write_log_start_offset()
        self._flushed_offset = min(self._flushed_offset, self.log_end_offset)
        self.producers.clear()
        for segment in self._segments:
            for _, header in segment.batches():
                self._replay_batch(header)
        self._log.info("log.truncated", log_end_offset=self.log_end_offset)

    # -- compaction ----------------------------------------------------------------------------

    @property
    def cleaner_offset(self) -> int:
        """Offsets below this have been compacted at least once (drives the dirty ratio)."""
        return self._cleaner_offset

    def install_cleaned(self, plan: CleanPlan) -> bool:
        """Swap compacted copies in for their segments; False (and nothing changed) if the log moved on."""
        live = {id(s) for s in self._segments[:-1]}
        if self._closed or any(id(old) not in live for old, _ in plan.replacements):
            for _, path in plan.replacements:
                path.unlink(missing_ok=True)
            return False
        now = self._time_ms()
        swapped: dict[int, Segment | None] = {}
        for old, path in plan.replacements:
            old.close()
            os.replace(path, old.path)  # atomic: a crash leaves the old or the new file, never neither
            new = Segment(old.path, old.base_offset, self.config.index_interval_bytes, now)
            new.recover(check_crc=False)
            if new.is_empty:
                new.delete()
                swapped[id(old)] = None
            else:
                swapped[id(old)] = new
        segments: list[Segment] = []
        for s in self._segments:
            replacement = swapped.get(id(s), s)
            if replacement is not None:
                segments.append(replacement)
        self._segments = segments
        self._segment_bases = [s.base_offset for s in segments]
        self._cleaner_offset = max(self._cleaner_offset, plan.clean_offset)
        self._write_offset_file(CLEANER_OFFSET_FILE, self._cleaner_offset)
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise UnknownTopicOrPartition(f"{self.topic}-{self.partition} is closed or deleted")

    def update_config(self, config: LogConfig) -> None:
        self.config = config

    def close(self) -> None:
        """Flush to disk and mark the shutdown clean (the next open then has nothing left to fsync)."""
        if self._closed:
            return
        self.flush()
        for segment in self._segments:
            segment.close()
        (self.directory / CLEAN_SHUTDOWN_FILE).touch()
        self._closed = True

    def delete(self) -> None:
        """Close and remove every file of this log (the directory is the caller's)."""
        for segment in self._segments:
            segment.delete()
        self._segments = []
        self._closed = True

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.topic}-{self.partition}, start={self._log_start_offset}, "
            f"end={self.log_end_offset}, segments={len(self._segments)})"
        )


__all__ = ["AppendInfo", "PartitionLog", "ScanError", "TimestampOffset"]
