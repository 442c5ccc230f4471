"""An append-only journal of CRC-framed record batches with checkpoints (the topic metadata log's files,
and the security store's).

Two kinds of file in the data dir: `<prefix><base>.log` holds the batches from offset `base` on;
`<prefix><end>.checkpoint` the whole state after the batches below `end`, written as batches too
(offsets zero-padded to 20 digits). Load replays the newest checkpoint and the log after it, cutting
off a torn or corrupt tail (a crash mid-write); a batch is applied whole or not at all. When the log
outgrows the checkpoint a new checkpoint is written from the live state and an empty log started, so
a change costs O(1) amortised. Appends are written at once (the page cache survives a process crash);
`sync()` makes them durable and is safe to call from another thread, so the broker fsyncs off the
event loop, batching the appends made meanwhile.

A batch is one line: `<payload length, 8 hex> <CRC-32 of the payload, 8 hex> <JSON array>\n`. What
the records mean is the owner's: it passes `replay` (apply one batch) and `snapshot` (the live state
as batches).
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.log.errors import KafkaStorageError
from kafkito.broker.log.storage import fsync_dir

log = structlog.get_logger("kafkito.journal")

LOG_SUFFIX = ".log"
CHECKPOINT_SUFFIX = ".checkpoint"
MIN_COMPACT_BYTES = 1 << 20  # the log is compacted once it exceeds this and the checkpoint's size

Record = dict[str, Any]
Replay = Callable[[list[Record]], None]
Snapshot = Callable[[], Iterable[list[Record]]]


# -- framing --------------------------------------------------------------------------------------


def encode_batch(records: list[Record]) -> bytes:
    payload = json.dumps(records, separators=(",", ":"), sort_keys=True).encode()
    return b"%08x %08x " % (len(payload), zlib.crc32(payload)) + payload + b"\n"


def decode_batches(data: bytes) -> tuple[list[list[Record]], int]:
    """The whole batches at the start of `data` and the length they cover (a bad frame ends them)."""
    batches: list[list[Record]] = []
    pos = 0
    while pos < len(data):
        batch = _decode_one(data, pos)
        if batch is None:
            break
        records, pos = batch
        batches.append(records)
    return batches, pos


def _decode_one(data: bytes, pos: int) -> tuple[list[Record], int] | None:
    header = data[pos : pos + 18]
    if len(header) < 18 or header[8:9] != b" " or header[17:18] != b" ":
        return None
    try:
        length, crc = int(header[:8], 16), int(header[9:17], 16)
    except ValueError:
        return None
    start, end = pos + 18, pos + 18 + length
    if end >= len(data) or data[end : end + 1] != b"\n":
        return None
    payload = data[start:end]
    if zlib.crc32(payload) != crc:
        return None
    try:
        records = json.loads(payload)
    except ValueError:
        return None
    return (records, end + 1) if isinstance(records, list) else None


# -- the files ------------------------------------------------------------------------------------


class Journal:
    """Owns one `<prefix>*` family of files: load, append, sync (from any thread), compaction."""

    def __init__(
        self,
        data_dir: Path,
        prefix: str,
        replay: Replay,
        snapshot: Snapshot,
        *,
        compact_bytes: int = MIN_COMPACT_BYTES,
        name: str = "journal",
    ) -> None:
        self.data_dir = data_dir
        self.prefix = prefix
        self.name = name  # the prefix of its log events: `<name>.torn_tail_dropped`, `<name>.compacted`
        self._replay = replay
        self._snapshot = snapshot
        self.compact_bytes = compact_bytes
        self._lock = threading.Lock()  # the fd against a sync() running in another thread
        self._fd = -1
        self._base = 0  # offset of the open log's first batch
        self._batches = 0  # batches in the open log
        self._size = 0  # bytes of whole batches in the open log: the next append goes there
        self._checkpoint_size = 0
        self._retry_at = 0  # log size from which a compaction that failed is tried again
        self._written = 0  # appends made / made durable (sync compares them)
        self._synced = 0

    # -- load ------------------------------------------------------------------------------------

    def load(self) -> None:
        """Replay the newest checkpoint and its log; remove what an interrupted compaction left."""
        for stray in self.data_dir.glob(f"{self.prefix}*.tmp"):
            stray.unlink(missing_ok=True)
        checkpoints = self.files(CHECKPOINT_SUFFIX)
        end = checkpoints[-1] if checkpoints else 0
        if checkpoints:
            path = self.path(end, CHECKPOINT_SUFFIX)
            data = path.read_bytes()
            batches, good = decode_batches(data)
            if good != len(data):
                raise KafkaStorageError(f"checkpoint {path} is corrupt at byte {good}")
            for records in batches:
                self._replay(records)
            self._checkpoint_size = len(data)
        self._open_log(end)
        for stale in checkpoints[:-1]:
            self.path(stale, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
        for base in self.files(LOG_SUFFIX):
            if base != end:
                self.path(base, LOG_SUFFIX).unlink(missing_ok=True)

    def files(self, suffix: str) -> list[int]:
        """The offsets of this journal's files with `suffix`, in order."""
        cut = len(self.prefix)
        names = (p.name[cut : -len(suffix)] for p in self.data_dir.glob(f"{self.prefix}*{suffix}"))
        return sorted(int(n) for n in names if n.isdigit())

    def path(self, offset: int, suffix: str) -> Path:
        return self.data_dir / f"{self.prefix}{offset:020d}{suffix}"

    @property
    def log_path(self) -> Path:
        """The log file appends go to."""
        return self.path(self._base, LOG_SUFFIX)

    def _open_log(self, base: int) -> None:
        path = self.path(base, LOG_SUFFIX)
        existed = path.exists()
        data = path.read_bytes() if existed else b""
        batches, good = decode_batches(data)
        for records in batches:
            self._replay(records)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not existed:
            fsync_dir(self.data_dir)
        if good != len(data):
            log.warning(f"{self.name}.torn_tail_dropped", path=str(path), bytes=len(data) - good)
            os.ftruncate(self._fd, good)
            os.fsync(self._fd)
        self._base, self._batches, self._size = base, len(batches), good

    # -- writes ----------------------------------------------------------------------------------

    def append(self, records: list[Record]) -> None:
        """Write one batch after the whole ones, then apply it; on OSError nothing is applied.

        A failed write may leave a partial frame: the next append overwrites it, and load cuts it off.
        """
        frame = encode_batch(records)
        written = os.pwrite(self._fd, frame, self._size)
        if written != len(frame):
            raise OSError(f"short write to {self.path(self._base, LOG_SUFFIX)} ({written} of {len(frame)})")
        self._replay(records)
        self._size += len(frame)
        self._batches += 1
        self._written += 1

    @property
    def end_offset(self) -> int:
        """The offset the next batch gets: batches appended since the journal began."""
        return self._base + self._batches

    @property
    def dirty(self) -> bool:
        return self._synced != self._written

    def sync(self) -> None:
        """Fsync the appends made so far (callable from a worker thread)."""
        with self._lock:
            target = self._written
            if self._synced >= target or self._fd < 0:
                return
            os.fsync(self._fd)
            self._synced = max(self._synced, target)

    def maybe_compact(self) -> bool:
        """Checkpoint the live state and start an empty log once the log has outgrown the checkpoint."""
        threshold = max(self.compact_bytes, self._checkpoint_size)
        if self._size < max(threshold, self._retry_at):
            return False
        self._retry_at = self._size + threshold  # if this attempt fails: not again at every change
        end = self._base + self._batches
        size = self.write_checkpoint(end)
        try:
            fd = os.open(self.path(end, LOG_SUFFIX), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError:
            self.path(end, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
            raise
        with self._lock:
            old_fd, old_base, self._fd = self._fd, self._base, fd
            self._base, self._batches, self._size = end, 0, 0
            self._synced = self._written  # the checkpoint holds everything, fsynced
        self._checkpoint_size, self._retry_at = size, 0
        os.close(old_fd)
        self.path(old_base, LOG_SUFFIX).unlink(missing_ok=True)
        for stale in self.files(CHECKPOINT_SUFFIX):
            if stale != end:
                self.path(stale, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
        fsync_dir(self.data_dir)
        log.info(f"{self.name}.compacted", prefix=self.prefix, checkpoint=end, bytes=size)
        return True

    def write_checkpoint(self, end: int, batches: Iterable[list[Record]] | None = None) -> int:
        """Write (atomically, fsynced) the checkpoint of the state after the batches below `end`:
        the live state's snapshot, or `batches` (a migration writes its first checkpoint this way)."""
        path = self.path(end, CHECKPOINT_SUFFIX)
        tmp = path.with_name(path.name + ".tmp")
        size = 0
        with open(tmp, "wb") as f:
            for records in self._snapshot() if batches is None else batches:
                size += f.write(encode_batch(records))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(self.data_dir)
        return size

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
