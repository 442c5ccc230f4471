"""A partition's segments on disk: opening and recovery, rolling, flushing, reads, retention, truncation.

`SegmentedLog` knows batches only by their headers and positions; what producers write and what it
means (offsets assigned on append, idempotence, transactions) is `PartitionLog`'s, which keeps its
state current through the hooks here: every stored batch is replayed into it at open and after a
truncation, and it hears of deleted segments and of producer expiry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.batch import BatchHeader
from kafkito.broker.log.checkpoints import (
    CLEAN_SHUTDOWN_FILE,
    CLEANER_OFFSET_FILE,
    LOG_START_OFFSET_FILE,
    RECOVERY_POINT_FILE,
    read_offset,
    write_offset,
)
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.errors import OffsetOutOfRange, UnknownTopicOrPartition
from kafkito.broker.log.reads import batch_headers, locate_batches
from kafkito.broker.log.recovery import SegmentLoader, read_recovery_point
from kafkito.broker.log.region import FileRegion
from kafkito.broker.log.retention import (
    SegmentTest,
    below_log_start,
    beyond_size,
    deletable_prefix,
    older_than,
)
from kafkito.broker.log.segment import Segment
from kafkito.broker.log.storage import LogDirHealth, fsync_dir, storage_guarded
from kafkito.broker.log.timestamps import TimestampOffset, max_timestamp_offset, offset_for_timestamp

if TYPE_CHECKING:
    from kafkito.broker.log.cleaner import CleanPlan

log = structlog.get_logger(__name__)

RECOVERY_CHECKPOINT_INTERVAL_MS = 60_000  # Kafka's log.flush.offset.checkpoint.interval.ms


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class SegmentedLog:
    """Segments of magic-v2 batches under `<data>/<topic>-<partition>/`, oldest first.

    One replica, so the high watermark is the log end offset.
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
        dir_health: LogDirHealth | None = None,
        new: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.topic = topic
        self.partition = partition
        self.config = config
        self.leader_epoch = leader_epoch
        self._time_ms = time_ms
        self._log = log.bind(topic=topic, partition=partition)
        self._segments: list[Segment] = []
        self._segment_bases: list[int] = []
        self._log_start_offset = 0
        self._cleaner_offset = 0
        self._flushed_offset = 0
        self._last_flush_ms = time_ms()
        self._closed = False
        self.dir_health = dir_health or LogDirHealth(self.directory.parent)
        self._checkpoint_ms = self._last_flush_ms
        self.directory.mkdir(parents=True, exist_ok=True)
        if new:
            self._create()
        else:
            self._open()

    # -- opening and recovery ------------------------------------------------------------------

    @storage_guarded
    def _open(self) -> None:
        # One listing of the directory answers which files exist (a restart opens every partition).
        names = set(os.listdir(self.directory))
        clean = CLEAN_SHUTDOWN_FILE in names
        if clean:
            (self.directory / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
        now = self._time_ms()
        strays = [name for name in names if name.endswith((".tmp", ".cleaned"))]
        for name in strays:  # half-written checkpoints, unfinished compactions
            (self.directory / name).unlink()
        names.difference_update(strays)
        self._cleaner_offset = read_offset(self.directory, CLEANER_OFFSET_FILE, names) or 0
        recovery_point = read_recovery_point(self.directory, clean, names)
        loader = SegmentLoader(
            self.directory,
            index_interval_bytes=self.config.index_interval_bytes,
            now_ms=now,
            recovery_point=recovery_point,
            gaps_allowed=self.config.compact or self._cleaner_offset > 0,
            clean_shutdown=clean,
            on_batch=self._replay_batch,
            logger=self._log,
            listing=names,
        )
        self._segments = loader.load()
        if not self._segments:
            self._segments.append(Segment.create(self.directory, 0, self.config.index_interval_bytes, now))
        self._segment_bases = [s.base_offset for s in self._segments]
        self._state_rebuilt()
        stored_start = read_offset(self.directory, LOG_START_OFFSET_FILE, names) or 0
        self._log_start_offset = min(max(stored_start, self._segments[0].base_offset), self.log_end_offset)
        self._flushed_offset = self.log_end_offset if clean else min(recovery_point, self.log_end_offset)
        self._log.debug(
            "log.opened",
            segments=len(self._segments),
            log_start_offset=self._log_start_offset,
            log_end_offset=self.log_end_offset,
            recovery_point=recovery_point,
            clean_shutdown=clean,
            repairs=loader.repairs,
        )

    @storage_guarded
    def _create(self) -> None:
        """A new partition, in a directory its creator has just made: one empty segment, nothing to
        read or recover (what `_open` finds there, without its ~30 file-system calls: a topic's
        partitions are created one after the other, `__consumer_offsets`' 50 on a broker's first start)."""
        now = self._time_ms()
        interval = self.config.index_interval_bytes
        self._segments = [Segment.create(self.directory, 0, interval, now, keep_open=False)]
        self._segment_bases = [0]
        # Not "log.opened ... clean_shutdown=False": a new partition had no shutdown, clean or not.
        self._log.debug("log.created", segments=1)

    # -- hooks for what the log's batches mean (PartitionLog) ---------------------------------

    def _replay_batch(self, segment: Segment, position: int, header: BatchHeader) -> None:
        """A stored batch, in log order: at open, and from the start again after a truncation."""

    def _state_reset(self) -> None:
        """Before every stored batch is replayed again (a truncation)."""

    def _state_rebuilt(self) -> None:
        """Every stored batch has been replayed (at open, after a truncation)."""

    def _segments_deleted(self) -> None:
        """The oldest segments were deleted (retention, DeleteRecords)."""

    def _expire(self, now_ms: int) -> None:
        """Periodic: forget what has expired by `now_ms` (with retention)."""

    def _write_log_start_offset(self) -> None:
        write_offset(self.directory, LOG_START_OFFSET_FILE, self._log_start_offset)

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
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def segments(self) -> list[Segment]:
        """The live segments, oldest first (read-only use: tests, the cleaner)."""
        return list(self._segments)

    # -- rolling -------------------------------------------------------------------------------

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

    @storage_guarded
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

    @storage_guarded
    def maybe_flush(self, now_ms: int) -> None:
        """Fsync if `flush.ms` has elapsed since the last flush and there is something to flush."""
        due = now_ms - self._last_flush_ms >= self.config.flush_ms
        if due and self._flushed_offset < self.log_end_offset and not self.dir_health.offline:
            self.flush(now_ms)

    @storage_guarded
    def flush(self, now_ms: int | None = None, *, checkpoint: bool = False) -> None:
        """Fsync what may be unflushed (and the directory, for new files); the recovery point moves to
        the log end, on disk once a minute as in Kafka (a stale one only lengthens recovery) or now."""
        now = self._time_ms() if now_ms is None else now_ms
        new_files = False
        for segment in self._segments:
            if segment.next_offset > self._flushed_offset:
                segment.flush()
                new_files = new_files or segment.base_offset >= self._flushed_offset
        if new_files:
            fsync_dir(self.directory)
        self._flushed_offset = self.log_end_offset
        self._last_flush_ms = now
        if checkpoint or now - self._checkpoint_ms >= RECOVERY_CHECKPOINT_INTERVAL_MS:
            write_offset(self.directory, RECOVERY_POINT_FILE, self._flushed_offset)
            self._checkpoint_ms = now

    @property
    def recovery_point(self) -> int:
        """Offsets below this are known to be on disk (fsynced)."""
        return self._flushed_offset

    # -- read ----------------------------------------------------------------------------------

    @storage_guarded
    def read(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        """Whole batches starting with the one holding `fetch_offset`, up to `max_bytes`.

        The first batch is returned whole even if it is larger than `max_bytes` (so a consumer
        always progresses); later batches stop before one that would exceed it. Batches at or
        beyond `max_offset` (exclusive) are left out. Reads stay within one segment, as Kafka's do.
        Raises OffsetOutOfRange outside [log start offset, log end offset].
        """
        span = self._span(fetch_offset, max_bytes, max_offset)
        return b"" if span is None else span[0].read(span[1], span[2] - span[1])

    @storage_guarded
    def read_for_send(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None, region_at: int
    ) -> bytes | FileRegion:
        """`read`, except that `region_at` bytes or more stay in the file as a FileRegion (Fetch sends
        them with sendfile, from the page cache to the socket)."""
        span = self._span(fetch_offset, max_bytes, max_offset)
        if span is None:
            return b""
        segment, start, end = span
        size = end - start
        return segment.region(start, size) if size >= region_at else segment.read(start, size)

    def _span(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None
    ) -> tuple[Segment, int, int] | None:
        """The segment and the file positions a read covers; None when there is nothing to read."""
        self._ensure_open()
        end_offset = self.log_end_offset
        if fetch_offset < self._log_start_offset or fetch_offset > end_offset:
            raise OffsetOutOfRange(
                f"offset {fetch_offset} is outside [{self._log_start_offset}, {end_offset}] "
                f"of {self.topic}-{self.partition}"
            )
        if fetch_offset == end_offset or (max_offset is not None and fetch_offset >= max_offset):
            return None
        return locate_batches(self._segments, self._segment_bases, fetch_offset, max_bytes, max_offset)

    @storage_guarded
    def batch_headers(self, start_offset: int = 0) -> list[BatchHeader]:
        """Headers of all stored batches from the one holding `start_offset` (tests and tools)."""
        return batch_headers(self._segments, self._segment_bases, start_offset)

    # -- list offsets --------------------------------------------------------------------------

    @storage_guarded
    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first record with timestamp >= `timestamp` at or after the log start (ListOffsets), or None."""
        return offset_for_timestamp(self._segments, self._log_start_offset, timestamp)

    @storage_guarded
    def max_timestamp_offset(self) -> TimestampOffset | None:
        """The record with the largest timestamp (ListOffsets MAX_TIMESTAMP), earliest on ties."""
        return max_timestamp_offset(self._segments)

    # -- retention and deletion ----------------------------------------------------------------

    @storage_guarded
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
            self._delete_prefix(below_log_start(self._log_start_offset))
            self._log.info("log.start_offset_moved", log_start_offset=target)
        return self._log_start_offset

    @storage_guarded
    def maybe_enforce_retention(self, now_ms: int | None = None) -> int:
        """Delete whole old segments past retention.ms / retention.bytes; returns how many went."""
        now = self._time_ms() if now_ms is None else now_ms
        config = self.config
        self._expire(now)
        if self.dir_health.offline:
            return 0
        deleted = self._delete_prefix(below_log_start(self._log_start_offset))
        if not config.delete:
            return deleted
        if config.retention_ms >= 0:
            deleted += self._delete_prefix(older_than(now, config.retention_ms))
        if config.retention_bytes >= 0:
            deleted += self._delete_prefix(beyond_size(self._segments, config.retention_bytes))
        return deleted

    def _delete_prefix(self, test: SegmentTest) -> int:
        """Delete the oldest segments that pass `test`; a fresh active one is rolled first if all go."""
        doomed = self._segments[: deletable_prefix(self._segments, test)]
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
        self._segments_deleted()
        if self._segments[0].base_offset > self._log_start_offset:
            self._log_start_offset = self._segments[0].base_offset
            self._write_log_start_offset()
        return len(doomed)

    @storage_guarded
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
        if self._flushed_offset > self.log_end_offset:
            self._flushed_offset = self.log_end_offset
            write_offset(self.directory, RECOVERY_POINT_FILE, self._flushed_offset)
        self._state_reset()
        for segment in self._segments:
            for position, header in segment.batches():
                self._replay_batch(segment, position, header)
        self._state_rebuilt()
        self._log.info("log.truncated", log_end_offset=self.log_end_offset)

    # -- compaction ----------------------------------------------------------------------------

    @property
    def cleaner_offset(self) -> int:
        """Offsets below this have been compacted at least once (drives the dirty ratio)."""
        return self._cleaner_offset

    @storage_guarded
    def install_cleaned(self, plan: CleanPlan) -> bool:
        """Swap compacted copies in for their segments; False (and nothing changed) if the log moved on."""
        live = {id(s) for s in self._segments[:-1]}
        if self._closed or any(id(old) not in live for old, _ in plan.replacements):
            for _, path in plan.replacements:
                path.unlink(missing_ok=True)
            return False
        now = self._time_ms()
        # The cleaner offset goes first: whatever a crash leaves swapped in, the next open knows the
        # log was compacted and allows gaps in its closed segments.
        self._cleaner_offset = max(self._cleaner_offset, plan.clean_offset)
        write_offset(self.directory, CLEANER_OFFSET_FILE, self._cleaner_offset)
        swapped = {id(old): old.replace_with(path, now) for old, path in plan.replacements}
        segments: list[Segment] = []
        for s in self._segments:
            replacement = swapped.get(id(s), s)
            if replacement is not None:
                segments.append(replacement)
        self._segments = segments
        self._segment_bases = [s.base_offset for s in segments]
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise UnknownTopicOrPartition(f"{self.topic}-{self.partition} is closed or deleted")
        if self.dir_health.offline_reason is not None:
            self.dir_health.check()

    def update_config(self, config: LogConfig) -> None:
        self.config = config

    def close(self) -> None:
        """Flush to disk, write the recovery point and mark the shutdown clean (the next open then
        trusts everything but the active segment). A log dir gone offline is closed unclean."""
        if self._closed:
            return
        try:
            if not self.dir_health.offline:
                self.flush(checkpoint=True)
                (self.directory / CLEAN_SHUTDOWN_FILE).touch()
        finally:
            for segment in self._segments:
                segment.close()
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
