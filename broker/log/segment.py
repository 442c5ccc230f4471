"""One segment file of a partition log, with its in-memory sparse offset and time index."""

from __future__ import annotations

import errno
import os
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kafkito.broker.log.batch import (
    HEADER_SIZE,
    MIN_BATCH_LENGTH,
    BatchHeader,
    batch_crc,
    iter_headers,
    parse_header,
)
from kafkito.broker.log.file_handles import FileHandles, segment_files
from kafkito.broker.log.region import FileRegion
from kafkito.broker.log.storage import StorageFailure
from kafkito.broker.log.txn_index import TXN_INDEX_SUFFIX

SUFFIX = ".log"
# baseOffset, batchLength, partitionLeaderEpoch: the head of a batch that appending stamps
_STAMP = struct.Struct(">qii")
_BATCHES_PER_WRITE = 256  # two buffers each, well under IOV_MAX (1024 on Linux)
_SCAN_BLOCK = 64 * 1024
_LOOKUP_BLOCK = 16 * 1024

BatchCallback = Callable[[int, BatchHeader], None]  # (file position, header)
BatchCheck = Callable[[BatchHeader], str | None]


def segment_file_name(base_offset: int) -> str:
    """Kafka's naming: the base offset zero-padded to 20 digits."""
    return f"{base_offset:020d}{SUFFIX}"


class ScanError(Exception):
    """A segment stops holding valid batches at `position` (torn write, garbage, bad CRC, offsets).

    `header` is the batch found there when its framing was sound (a CRC or offset problem).
    """

    def __init__(self, position: int, reason: str, header: BatchHeader | None = None) -> None:
        super().__init__(f"{reason} at position {position}")
        self.position = position
        self.reason = reason
        self.header = header


class Segment:
    """An append-only file of record batches named by its base offset.

    The sparse index maps the base offset of a batch every `index_interval_bytes` to its file
    position, next to the largest timestamp seen up to and including that batch, so both offset
    and timestamp lookups start a short header walk from a known batch boundary.
    """

    __slots__ = (
        "_bytes_since_index",
        "_closed",
        "_files",
        "_idx_max_ts",
        "_idx_offsets",
        "_idx_positions",
        "base_offset",
        "created_ms",
        "fd",
        "first_batch_timestamp",
        "index_interval_bytes",
        "max_timestamp",
        "max_timestamp_position",
        "next_offset",
        "path",
        "pins",
        "size",
    )

    def __init__(
        self,
        path: Path,
        base_offset: int,
        index_interval_bytes: int,
        created_ms: int,
        files: FileHandles = segment_files,
    ) -> None:
        """A segment over the existing file at `path`, opened when first used (file_handles.py)."""
        self.path = path
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.fd = -1  # open only while the pool keeps it: use `_acquire`
        self.pins = 0
        self._files = files
        self._closed = False
        self.created_ms = created_ms
        self._reset_state()

    @classmethod
    def create(
        cls,
        directory: Path,
        base_offset: int,
        index_interval_bytes: int,
        now_ms: int,
        *,
        keep_open: bool = True,
        files: FileHandles = segment_files,
    ) -> Segment:
        """A new empty segment file; `keep_open` leaves its descriptor in the pool (a roll, about to be
        written), else it is closed at once (a new partition: thousands may be created in one go)."""
        path = directory / segment_file_name(base_offset)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise StorageFailure(path, "open", e) from e
        segment = cls(path, base_offset, index_interval_bytes, now_ms, files)
        if keep_open:
            files.adopt(segment, fd)
        else:
            os.close(fd)
        return segment

    def _acquire(self, op: str) -> int:
        """The file's descriptor, pinned until `_release` (StorageFailure `op` when it cannot be opened)."""
        if self._closed:
            raise StorageFailure(self.path, op, OSError(errno.EBADF, "segment is closed"))
        try:
            return self._files.acquire(self)
        except OSError as e:
            raise StorageFailure(self.path, op, e) from e

    def _release(self) -> None:
        self._files.release(self)

    def _reset_state(self) -> None:
        self.size = 0
        self.next_offset = self.base_offset
        self.max_timestamp = -1
        self.max_timestamp_position = -1
        self.first_batch_timestamp = -1
        self._idx_offsets: list[int] = []
        self._idx_positions: list[int] = []
        self._idx_max_ts: list[int] = []
        self._bytes_since_index = 0

    # -- state ---------------------------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    @property
    def largest_timestamp(self) -> int:
        """What time retention measures a segment by: its newest record, else the file's mtime."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return int(os.stat(self.path).st_mtime * 1000)

    @property
    def index_entries(self) -> int:
        return len(self._idx_offsets)

    def _observe(self, position: int, header: BatchHeader) -> None:
        """Account for a batch now stored at `position` (append and recovery share this)."""
        size = header.size
        if not self._idx_offsets or self._bytes_since_index >= self.index_interval_bytes:
            self._idx_offsets.append(header.base_offset)
            self._idx_positions.append(position)
            self._idx_max_ts.append(max(self.max_timestamp, header.max_timestamp))
            self._bytes_since_index = 0
        self._bytes_since_index += size
        if self.first_batch_timestamp < 0 and position == 0:
            self.first_batch_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp = header.max_timestamp
            self.max_timestamp_position = position
        self.next_offset = header.next_offset
        self.size = position + size

    # -- writing -------------------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview) -> None:
        """Write whole, already validated and offset-assigned batches; they reach the OS before return."""
        start = self.size
        view = memoryview(data)
        written = 0
        fd = self._acquire("write")
        try:
            while written < len(view):
                written += os.write(fd, view[written:])
        except OSError as e:
            try:
                self._truncate_file(start)  # back to the last whole batch: nothing torn is left
            except StorageFailure as undo:
                raise StorageFailure(self.path, "write", e, fatal=True) from undo
            raise StorageFailure(self.path, "write", e) from e
        finally:
            self._release()
        for rel, header in iter_headers(view):
            self._observe(start + rel, header)

    def append_stamped(
        self, records: bytes | bytearray | memoryview, batches: Sequence[tuple[int, BatchHeader]], epoch: int
    ) -> None:
        """Write a produce request's validated batches, each given as (position in `records`, header
        with its assigned base offset), stamped with the leader epoch on the way out: the file gets
        what `append` of the stamped copy would write, without copying the records in Python."""
        start = self.size
        view = memoryview(records)
        fd = self._acquire("write")
        try:
            for first in range(0, len(batches), _BATCHES_PER_WRITE):
                parts: list[bytes | memoryview] = []
                for pos, header in batches[first : first + _BATCHES_PER_WRITE]:
                    parts.append(_STAMP.pack(header.base_offset, header.batch_length, epoch))
                    parts.append(view[pos + _STAMP.size : pos + header.size])
                _write_all(fd, parts)
        except OSError as e:
            try:
                self._truncate_file(start)  # back to the last whole batch: nothing torn is left
            except StorageFailure as undo:
                raise StorageFailure(self.path, "write", e, fatal=True) from undo
            raise StorageFailure(self.path, "write", e) from e
        finally:
            self._release()
        position = start
        for _, header in batches:
            self._observe(position, header._replace(partition_leader_epoch=epoch))
            position += header.size

    def flush(self) -> None:
        """Fsync the file (whatever descriptor wrote to it: fsync is the file's, not the descriptor's)."""
        fd = self._acquire("fsync")
        try:
            os.fsync(fd)
        except OSError as e:
            raise StorageFailure(self.path, "fsync", e, fatal=True) from e
        finally:
            self._release()

    def truncate_to_position(self, position: int) -> None:
        """Cut the file at a batch boundary and rebuild the in-memory index from what is left."""
        self._truncate_file(position)
        self.recover(check_crc=False)

    def truncate_file(self, position: int) -> None:
        """Cut the file at `position` and make the cut durable (recovery's repairs)."""
        self._truncate_file(position)
        self.flush()

    def _truncate_file(self, position: int) -> None:
        fd = self._acquire("truncate")
        try:
            os.ftruncate(fd, position)
        except OSError as e:
            raise StorageFailure(self.path, "truncate", e, fatal=True) from e
        finally:
            self._release()

    def file_size(self) -> int:
        fd = self._acquire("stat")
        try:
            return os.fstat(fd).st_size
        except OSError as e:
            raise StorageFailure(self.path, "stat", e, fatal=True) from e
        finally:
            self._release()

    # -- recovery ------------------------------------------------------------------------------

    def rebuild(
        self, *, check_crc: bool, check: BatchCheck | None = None, on_batch: BatchCallback | None = None
    ) -> ScanError | None:
        """Rebuild the index from the file, stopping at the first invalid batch; the file is not changed.

        `check` judges each well-framed batch (offset order, say) and returns why it is invalid, or
        None. Afterwards `size` is where the valid batches end. Returns the problem, or None.
        """
        self._reset_state()
        try:
            for pos, header in self._scan(0, self.file_size(), check_crc=check_crc):
                reason = None if check is None else check(header)
                if reason is not None:
                    return ScanError(pos, reason, header)
                self._observe(pos, header)
                if on_batch is not None:
                    on_batch(pos, header)
        except ScanError as e:
            return e
        return None

    def recover(self, *, check_crc: bool, on_batch: BatchCallback | None = None) -> ScanError | None:
        """Rebuild the index from the file; on the first invalid batch, cut the file there.

        Returns the problem found (already repaired), or None when the whole file was valid.
        """
        problem = self.rebuild(check_crc=check_crc, on_batch=on_batch)
        if self.size != self.file_size():
            self._truncate_file(self.size)
            if problem is None:  # pragma: no cover - _scan raises for any unread tail
                problem = ScanError(self.size, "unread tail")
        return problem

    # -- reading -------------------------------------------------------------------------------

    def _scan(
        self, start: int, end: int, *, check_crc: bool = False, block: int = _SCAN_BLOCK
    ) -> Iterator[tuple[int, BatchHeader]]:
        """Yield (position, header) of consecutive batches in [start, end), reading in blocks.

        Raises ScanError where the bytes stop being a batch (short header, bad length or magic,
        a batch running past `end`, or with `check_crc` a CRC mismatch).
        """
        buf = b""
        buf_start = start
        pos = start
        while pos < end:
            rel = pos - buf_start
            if rel + HEADER_SIZE > len(buf):
                buf = self._pread(min(max(block, HEADER_SIZE), end - pos), pos)
                buf_start = pos
                rel = 0
                if len(buf) < HEADER_SIZE:
                    raise ScanError(pos, f"short header ({end - pos} bytes left)")
            header = parse_header(buf, rel)
            size = header.size
            if header.batch_length < MIN_BATCH_LENGTH:
                raise ScanError(pos, f"bad batch length {header.batch_length}")
            if header.magic != 2:
                raise ScanError(pos, f"bad magic {header.magic}")
            if pos + size > end:
                raise ScanError(pos, f"batch of {size} bytes runs past the end ({end - pos} bytes left)")
            if check_crc:
                if rel + size > len(buf) and size <= block:  # read on from the batch, CRC from memory
                    buf, buf_start, rel = self._pread(min(block, end - pos), pos), pos, 0
                self._check_crc(buf, rel, pos, header)
            yield pos, header
            pos += size

    def _check_crc(self, buf: bytes, rel: int, pos: int, header: BatchHeader) -> None:
        """The batch at file position `pos` (at `rel` in `buf`, if it is all there) must match its CRC."""
        size = header.size
        data, at = (buf, rel) if rel + size <= len(buf) else (self._pread(size, pos), 0)
        if batch_crc(data, at, size) != header.crc:
            raise ScanError(pos, "CRC mismatch", header)

    def batches(self, start_position: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """Headers of the stored batches from a batch boundary to the end of the segment."""
        return self._scan(start_position, self.size)

    def find(self, offset: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose last offset is >= `offset`, or None if the segment has none."""
        if offset >= self.next_offset:
            return None
        i = bisect_right(self._idx_offsets, offset) - 1
        start = self._idx_positions[i] if i >= 0 else 0
        for pos, header in self._scan(start, self.size, block=_LOOKUP_BLOCK):
            if header.last_offset >= offset:
                return pos, header
        return None

    def find_by_timestamp(self, timestamp: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose max timestamp is >= `timestamp`, or None."""
        if self.max_timestamp < timestamp:
            return None
        i = bisect_left(self._idx_max_ts, timestamp) - 1
        start = self._idx_positions[i] if i >= 0 else 0
        for pos, header in self._scan(start, self.size, block=_LOOKUP_BLOCK):
            if header.max_timestamp >= timestamp:
                return pos, header
        return None

    def end_of_read(self, start: int, first: BatchHeader, max_bytes: int, max_offset: int | None) -> int:
        """End position of the whole batches from `start` that fit in `max_bytes` and stay below
        `max_offset`; the first batch always counts (Kafka's "at least one batch" rule).
        """
        limit = start + max_bytes
        end = start + first.size
        if end >= limit or end >= self.size:
            return end
        # Jump ahead through the sparse index: every entry is a batch boundary.
        i = bisect_right(self._idx_positions, limit) - 1
        if max_offset is not None:
            i = min(i, bisect_left(self._idx_offsets, max_offset) - 1)
        if i >= 0 and self._idx_positions[i] > end:
            end = self._idx_positions[i]
        for pos, header in self._scan(end, self.size, block=_LOOKUP_BLOCK):
            if pos + header.size > limit or (max_offset is not None and header.base_offset >= max_offset):
                break
            end = pos + header.size
        return end

    def read(self, position: int, size: int) -> bytes:
        return self._pread(size, position)

    def region(self, position: int, size: int) -> FileRegion | bytes:
        """The bytes at `position`, left in the file for a response to send (see region.py); read into
        bytes when no descriptor is left to hold them (EMFILE is no failure of the disk)."""
        fd = self._acquire("read")
        try:
            try:
                return FileRegion(os.dup(fd), str(self.path), position, size)
            except OSError:
                return os.pread(fd, size, position)
        except OSError as e:
            raise StorageFailure(self.path, "read", e) from e
        finally:
            self._release()

    def _pread(self, size: int, position: int) -> bytes:
        fd = self._acquire("read")
        try:
            return os.pread(fd, size, position)
        except OSError as e:
            raise StorageFailure(self.path, "read", e) from e
        finally:
            self._release()

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file for good (its descriptor leaves the pool); the segment is not used again."""
        self._closed = True
        self._files.close(self)

    def __del__(self) -> None:
        # The pool holds every segment whose file is open, so one dropped without close() (an error
        # path; a crash simulated in a test) is only freed once its descriptor is closed or its pool
        # is gone (a test's own pool): then a descriptor still set must not stay open.
        fd = getattr(self, "fd", -1)
        if fd >= 0:
            os.close(fd)

    def delete(self) -> None:
        """Close and remove the segment's file and the aborted-transactions index file beside it."""
        self.close()
        self.path.unlink(missing_ok=True)
        self.path.with_suffix(TXN_INDEX_SUFFIX).unlink(missing_ok=True)

    def replace_with(self, path: Path, now_ms: int) -> Segment | None:
        """Swap the file at `path` (a compacted copy) in for this one's; the new segment, None if empty."""
        self.close()
        os.replace(path, self.path)  # atomic: a crash leaves the old or the new file, never neither
        new = Segment(self.path, self.base_offset, self.index_interval_bytes, now_ms, self._files)
        new.recover(check_crc=False)
        if new.is_empty:
            new.delete()
            return None
        return new

    def __repr__(self) -> str:
        return f"Segment(base_offset={self.base_offset}, size={self.size}, next_offset={self.next_offset})"


def _write_all(fd: int, parts: list[bytes | memoryview]) -> None:
    total = sum(len(part) for part in parts)
    written = os.writev(fd, parts)
    if written < total:  # a short write (rare): the rest goes out as one buffer
        rest = memoryview(b"".join(parts))[written:]
        while rest:
            rest = rest[os.write(fd, rest) :]
