"""Opening a partition's segment files: check them, repair what can be proven, quarantine the rest.

What is checked. Every batch's framing (length, magic) and its offsets: each batch starts where the
one before it ended (the first at the file's base offset) and none reaches the next file's base
offset. In a compacted log (or one compacted once) a closed segment may have gaps, so there a batch
must only not go back; the active segment is never compacted. Offsets cost nothing to check (the
headers are read anyway to build the index), and they catch what the CRC cannot: the base offset is
outside the CRC. CRCs are checked where a crash could have left damage, as Kafka does from its
recovery point: in every segment that may hold offsets at or above the recovery point (the
partition's `recovery-point` file, Kafka's `recovery-point-offset-checkpoint` kept per partition as
kafkito keeps `log-start-offset`: offsets below it were fsynced), and always in the active segment.

What is done with damage. Kafka cuts a segment at its first invalid batch and deletes every later
segment, counting on replicas to fetch the rest back; kafkito has no replica, so that would lose
acknowledged records, let the log end move back under the group offsets consumers committed, and
hand their offsets to new records. Instead:
- A batch whose only fault is its base offset, between neighbours that prove what it should be
  (its CRC holds, the batch after it starts exactly its record count later), is patched in place.
- Otherwise the bytes from the damage up to the next batch that is provably valid (whole, CRC
  correct, offsets in order) are dropped: the segment is cut there, and the valid batches after the
  damage move to a new segment file named by their base offset. The offsets of what was dropped
  stay unused (a gap, which consumers step over as they do in a compacted log). Nothing in a segment
  after the damage is lost unless no valid batch follows it.
- Damage with nothing valid after it in the active segment is a torn tail, the normal result of a
  crash. The log end stays where the torn batch's header (if it is whole and consistent) says it
  ended, and never goes below the recovery point, so no acknowledged offset is handed out again.
- Before any file is changed for damage that is not an unflushed torn tail, the original is copied
  aside as `<segment>.log.corrupt` (never read by kafkito; kept for the operator).
Each repair is logged with the file's path, the reason, and the offsets and bytes affected: at
error level, except an unflushed torn tail (a warning, as a crash leaves them).

The file changes are ordered so that a crash in the middle leaves something this same procedure
repairs: the quarantine copy is written first, the new segment next, and the damaged one is cut
last (until then, the new file's offsets overlap it, which the offset check rejects, and damage
found in a trusted segment has all of that segment CRC-checked).

Limits. A flipped byte inside the records of a closed segment below the recovery point is not
looked for at open (as in Kafka: that would CRC every byte of the log at each start); consumers'
CRC checks catch it. Nor is a base offset moved forward inside a gap of a compacted closed segment.
The leader epoch is checked by nothing. `records_lost` counts offsets: exact where offsets are
contiguous, at most that many records in a compacted segment.
"""

from __future__ import annotations

import mmap
import os
import shutil
from collections import deque
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from kafkito.broker.log.batch import (
    HEADER_SIZE,
    MAGIC_AT,
    MIN_BATCH_LENGTH,
    BatchHeader,
    batch_crc,
    parse_header,
)
from kafkito.broker.log.checkpoints import RECOVERY_POINT_FILE, read_offset
from kafkito.broker.log.segment import SUFFIX, ScanError, Segment, segment_file_name
from kafkito.broker.log.storage import fsync_dir

CORRUPT_SUFFIX = ".corrupt"
_MIN_RECORD_BYTES = 7  # length, attributes, timestamp and offset deltas, key, value, header count
_MAX_RECORDS_PER_COMPRESSED_BYTE = 64

Buffer = bytes | bytearray | memoryview


def segment_files(directory: Path, listing: Iterable[str] | None = None) -> list[tuple[int, Path]]:
    """(base offset, path) of the segment files in a partition directory, oldest first (from
    `listing`, the directory's file names, when the caller has them)."""
    names = os.listdir(directory) if listing is None else listing
    return sorted(
        (int(name[: -len(SUFFIX)]), directory / name)
        for name in names
        if name.endswith(SUFFIX) and name[: -len(SUFFIX)].isdigit()
    )


def read_recovery_point(directory: Path, clean: bool, listing: Collection[str] | None = None) -> int:
    """Offsets below this were fsynced. After a clean shutdown by a kafkito that kept no such file,
    every closed segment is trusted, as that kafkito trusted them."""
    stored = read_offset(directory, RECOVERY_POINT_FILE, listing)
    if stored is not None or not clean:
        return stored or 0
    files = segment_files(directory, listing)
    return files[-1][0] if files else 0


def offset_problem(header: BatchHeader, expected: int, upper: int | None, contiguous: bool) -> str | None:
    """Why a batch's offsets cannot follow `expected` (and stay below `upper`), or None."""
    if header.last_offset_delta < 0:
        return f"negative last offset delta {header.last_offset_delta}"
    if header.base_offset < expected:
        return f"base offset {header.base_offset} goes back below {expected}"
    if contiguous and header.base_offset != expected:
        return f"base offset {header.base_offset} skips ahead of {expected}"
    if upper is not None and header.last_offset >= upper:
        return f"last offset {header.last_offset} reaches the next segment's base offset {upper}"
    return None


class _OffsetOrder:
    """The offset check for one segment's scan; remembers the next offset and a rejected header."""

    def __init__(self, base: int, upper: int | None, contiguous: bool) -> None:
        self.expected = base
        self.upper = upper
        self.contiguous = contiguous
        self.rejected: BatchHeader | None = None

    def __call__(self, header: BatchHeader) -> str | None:
        reason = offset_problem(header, self.expected, self.upper, self.contiguous)
        if reason is None:
            self.expected = header.next_offset
        else:
            self.rejected = header
        return reason


def _valid_batch_at(buf: Buffer, pos: int, expected: int, upper: int | None) -> BatchHeader | None:
    """The header at `pos` if a whole, CRC-correct batch with offsets at or after `expected` is there."""
    if pos < 0 or pos + HEADER_SIZE > len(buf):
        return None
    header = parse_header(buf, pos)
    if header.magic != 2 or header.batch_length < MIN_BATCH_LENGTH or pos + header.size > len(buf):
        return None
    if offset_problem(header, expected, upper, contiguous=False) is not None:
        return None
    if batch_crc(buf, pos, header.size) != header.crc:
        return None
    return header


def find_resume(
    path: Path, problem: ScanError, expected: int, upper: int | None
) -> tuple[int, BatchHeader] | None:
    """The first provably valid batch after the damage at `problem.position`, or None.

    Tried first right after the damaged batch when its framing was sound, then at every byte.
    """
    start = problem.position
    with (
        open(path, "rb") as f,
        mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm,
        memoryview(mm) as view,
    ):
        if problem.header is not None:
            after = start + problem.header.size
            header = _valid_batch_at(view, after, expected, upper)
            if header is not None:
                return after, header
        at = mm.find(b"\x02", start + 1 + MAGIC_AT)
        while at >= 0:
            pos = at - MAGIC_AT
            header = _valid_batch_at(view, pos, expected, upper)
            if header is not None:
                return pos, header
            at = mm.find(b"\x02", at + 1)
    return None


def claimed_end(segment: Segment, position: int, expected: int) -> int | None:
    """Where a torn batch at `position` ended, if its header is whole and consistent, else None."""
    raw = segment.read(position, HEADER_SIZE)
    if len(raw) < HEADER_SIZE:
        return None
    header = parse_header(raw)
    room = header.batch_length - MIN_BATCH_LENGTH
    count = header.last_offset_delta + 1
    limit = room * _MAX_RECORDS_PER_COMPRESSED_BYTE if header.compression else room // _MIN_RECORD_BYTES
    if header.magic != 2 or header.base_offset != expected or header.record_count != count:
        return None
    if not 0 < count <= limit:
        return None
    return header.next_offset


def _proven_base(path: Path, problem: ScanError, expected: int, upper: int | None) -> bool:
    """A batch rejected only for its base offset is really at `expected`: its CRC holds and the next
    batch (or the next segment) starts exactly its record count later."""
    header = problem.header
    if header is None:
        return False
    true_next = expected + header.last_offset_delta + 1
    with (
        open(path, "rb") as f,
        mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm,
        memoryview(mm) as view,
    ):
        pos = problem.position
        if pos + header.size > len(view) or batch_crc(view, pos, header.size) != header.crc:
            return False
        after = pos + header.size
        if after == len(view):
            return upper == true_next
        successor = _valid_batch_at(view, after, true_next, upper)
        return successor is not None and successor.base_offset == true_next


class SegmentLoader:
    """Opens, checks and repairs the segment files of one partition directory (see the module doc)."""

    def __init__(
        self,
        directory: Path,
        *,
        index_interval_bytes: int,
        now_ms: int,
        recovery_point: int,
        gaps_allowed: bool,
        clean_shutdown: bool,
        on_batch: Callable[[Segment, int, BatchHeader], None],
        logger: Any,
        listing: Collection[str] | None = None,
    ) -> None:
        self.directory = directory
        self.listing = listing  # the directory's file names, if the caller listed it already
        self.index_interval_bytes = index_interval_bytes
        self.now_ms = now_ms
        self.recovery_point = recovery_point
        self.gaps_allowed = gaps_allowed
        self.clean_shutdown = clean_shutdown
        self.on_batch = on_batch
        self.log = logger
        self.repairs = 0

    def load(self) -> list[Segment]:
        queue = deque(segment_files(self.directory, self.listing))
        segments: list[Segment] = []
        while queue:
            base, path = queue.popleft()
            upper = queue[0][0] if queue else None
            segment = Segment(path, base, self.index_interval_bytes, self.now_ms)
            order = _OffsetOrder(base, upper, contiguous=upper is None or not self.gaps_allowed)
            check_crc = upper is None or upper > self.recovery_point
            problem = segment.rebuild(check_crc=check_crc, check=order, on_batch=self._replayer(segment))
            if problem is not None and not check_crc:
                # Damage in a trusted segment makes all of it suspect (a repair cut short by a crash
                # leaves one like that): its batches get their CRCs checked after all. Those
                # already replayed into producer state stay there, as acknowledged batches would.
                order = _OffsetOrder(base, upper, contiguous=order.contiguous)
                problem = segment.rebuild(check_crc=True, check=order)
            if problem is not None:
                self.repairs += 1
                if self._repair(segment, problem, order, queue):
                    segment.close()
                    queue.appendleft((base, path))  # patched in place: scan it again
                    continue
            if segment.is_empty and queue and problem is not None:
                segment.delete()  # cut to nothing; its quarantined copy keeps the bytes
                continue
            segments.append(segment)
        end = segments[-1].next_offset if segments else 0
        if end < self.recovery_point:
            self.log.error(
                "log.end_below_recovery_point",
                path=str(self.directory),
                log_end_offset=end,
                recovery_point=self.recovery_point,
            )
            segments.append(self._empty_segment(self.recovery_point))
        return segments

    def _replayer(self, segment: Segment) -> Callable[[int, BatchHeader], None]:
        on_batch = self.on_batch
        return lambda position, header: on_batch(segment, position, header)

    def _repair(
        self, segment: Segment, problem: ScanError, order: _OffsetOrder, queue: deque[tuple[int, Path]]
    ) -> bool:
        """Repair the damage `problem` found in `segment`; True if the file was patched in place."""
        expected, upper = order.expected, order.upper
        if (
            order.rejected is not None
            and order.contiguous
            and _proven_base(segment.path, problem, expected, upper)
        ):
            self._patch_base_offset(segment, problem, expected)
            return True
        position, file_size = problem.position, segment.file_size()
        resume = find_resume(segment.path, problem, expected, upper)
        flushed = expected < self.recovery_point
        tail = resume is None and upper is None
        claimed = claimed_end(segment, position, expected) if tail else None
        quarantined = None if tail and not flushed else self._quarantine(segment)
        facts: dict[str, Any] = dict(
            path=str(segment.path),
            position=position,
            reason=problem.reason,
            first_lost_offset=expected,
            below_recovery_point=flushed,
            quarantined=None if quarantined is None else str(quarantined),
            bytes_dropped=file_size - position,
        )
        if resume is not None:
            at, header = resume
            queue.appendleft((header.base_offset, self._split_off(segment, at, header.base_offset)))
            facts.update(resumed_at_position=at, resumed_at_offset=header.base_offset)
            facts.update(records_lost=header.base_offset - expected, bytes_dropped=at - position)
        elif upper is not None:
            facts.update(records_lost=upper - expected)
        else:
            # Keep the offsets the torn batch had (and everything below the recovery point) used.
            end = max(expected, claimed or expected, self.recovery_point)
            known = claimed is not None or end > expected
            facts.update(log_end_offset=end, records_lost=end - expected if known else None)
            if end > expected:
                queue.appendleft((end, self._empty_segment_file(end)))
        segment.truncate_file(position)
        if not tail:
            self.log.error("log.corrupt_data_skipped", **facts)
        elif flushed:
            self.log.error("log.truncated_invalid_tail", **facts)
        else:
            self.log.warning("log.truncated_invalid_tail", clean_shutdown=self.clean_shutdown, **facts)
        return False

    def _patch_base_offset(self, segment: Segment, problem: ScanError, expected: int) -> None:
        assert problem.header is not None
        quarantined = self._quarantine(segment)
        with open(segment.path, "r+b") as f:
            f.seek(problem.position)
            f.write(expected.to_bytes(8, "big", signed=True))
            f.flush()
            os.fsync(f.fileno())
        self.log.error(
            "log.batch_offset_repaired",
            path=str(segment.path),
            position=problem.position,
            reason=problem.reason,
            stored_base_offset=problem.header.base_offset,
            repaired_base_offset=expected,
            records=problem.header.last_offset_delta + 1,
            records_lost=0,
            quarantined=str(quarantined),
        )

    def _quarantine(self, segment: Segment) -> Path:
        """Copy the segment aside, untouched, before it is repaired."""
        target = segment.path.with_name(segment.path.name + CORRUPT_SUFFIX)
        n = 0
        while target.exists():
            n += 1
            target = segment.path.with_name(f"{segment.path.name}.{n}{CORRUPT_SUFFIX}")
        tmp = target.with_name(target.name + ".tmp")
        shutil.copyfile(segment.path, tmp)
        _fsync_file(tmp)
        os.replace(tmp, target)
        fsync_dir(self.directory)
        return target

    def _split_off(self, segment: Segment, position: int, base_offset: int) -> Path:
        """Copy the batches from `position` on into a new segment file named by `base_offset`."""
        target = self.directory / segment_file_name(base_offset)
        tmp = target.with_name(target.name + ".tmp")
        with open(segment.path, "rb") as src, open(tmp, "wb") as dst:
            src.seek(position)
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, target)
        fsync_dir(self.directory)
        return target

    def _empty_segment_file(self, base_offset: int) -> Path:
        path = self.directory / segment_file_name(base_offset)
        path.touch()
        fsync_dir(self.directory)
        return path

    def _empty_segment(self, base_offset: int) -> Segment:
        path = self._empty_segment_file(base_offset)
        return Segment(path, base_offset, self.index_interval_bytes, self.now_ms)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
