"""The topic metadata log: every topic change is one appended, CRC-framed batch of records (O(1) each).

In the spirit of Kafka's KRaft `__cluster_metadata` log. Two kinds of file in the data dir:
`metadata-<base>.log` holds the batches from offset `base` on; `metadata-<end>.checkpoint` is a
snapshot of every topic after the batches below `end` (offsets zero-padded to 20 digits). Start-up
replays the newest checkpoint, then the log that follows it. When the log outgrows the checkpoint it
is compacted (a new checkpoint, then an empty log after it), so a change costs O(1) amortised however
many topics exist.

A batch is one line: `<payload length, 8 hex> <CRC-32 of the payload, 8 hex> <JSON array>\n`. The
records are TopicRecord, PartitionRecord, ConfigRecord and RemoveTopicRecord, as Kafka names them.
A batch is applied whole or not at all: a torn or corrupt tail (a crash mid-write) is cut off on load.
Appends are written at once (the page cache survives a process crash); `sync()` makes them durable and
is safe to call from another thread, so the broker fsyncs off the event loop, batching the appends
made meanwhile.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.log.errors import KafkaStorageError
from kafkito.broker.log.storage import fsync_dir

log = structlog.get_logger("kafkito.metadata")

FILE_PREFIX = "metadata-"
LEGACY_FILE = "topics.json"  # kafkito before the metadata log: the whole state, rewritten per change
LOG_SUFFIX = ".log"
CHECKPOINT_SUFFIX = ".checkpoint"
MIN_COMPACT_BYTES = 1 << 20  # the log is compacted once it exceeds this and the checkpoint's size

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic as the broker knows it: name, stable id, partition count and config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)


# -- records --------------------------------------------------------------------------------------


def topic_records(info: TopicInfo) -> list[Record]:
    """A new topic: its TopicRecord, a PartitionRecord per partition, a ConfigRecord per override."""
    return [
        {"type": "TopicRecord", "name": info.name, "topic_id": str(info.topic_id)},
        *partition_records(info, 0, info.partitions),
        *config_records(info, {}, info.configs),
    ]


def partition_records(info: TopicInfo, start: int, end: int) -> list[Record]:
    tid = str(info.topic_id)
    return [{"type": "PartitionRecord", "topic_id": tid, "partition_id": p} for p in range(start, end)]


def config_records(info: TopicInfo, old: Mapping[str, str], new: Mapping[str, str]) -> list[Record]:
    """ConfigRecords turning `old` overrides into `new` (a null value removes an override)."""
    tid = str(info.topic_id)
    out: list[Record] = [
        {"type": "ConfigRecord", "topic_id": tid, "name": k, "value": None}
        for k in sorted(old)
        if k not in new
    ]
    out += [
        {"type": "ConfigRecord", "topic_id": tid, "name": k, "value": v}
        for k, v in sorted(new.items())
        if old.get(k) != v
    ]
    return out


def remove_records(info: TopicInfo) -> list[Record]:
    return [{"type": "RemoveTopicRecord", "topic_id": str(info.topic_id)}]


class MetadataImage:
    """The topics that replaying records gives (the same code runs on load and after each append)."""

    def __init__(self) -> None:
        self.by_id: dict[uuid.UUID, TopicInfo] = {}
        self.by_name: dict[str, TopicInfo] = {}
        self.by_collision_name: dict[str, str] = {}  # '.' read as '_' (Kafka refuses such a pair) -> name

    def replay(self, records: Iterable[Record]) -> None:
        for r in records:
            kind = r["type"]
            tid = uuid.UUID(r["topic_id"])
            if kind == "TopicRecord":
                self._put(TopicInfo(r["name"], tid, 0, {}))
                continue
            info = self.by_id[tid]
            if kind == "PartitionRecord":
                self._put(replace(info, partitions=max(info.partitions, int(r["partition_id"]) + 1)))
            elif kind == "ConfigRecord":
                configs = dict(info.configs)
                if r["value"] is None:
                    configs.pop(r["name"], None)
                else:
                    configs[r["name"]] = str(r["value"])
                self._put(replace(info, configs=configs))
            elif kind == "RemoveTopicRecord":
                del (
                    self.by_id[tid],
                    self.by_name[info.name],
                    self.by_collision_name[collision_name(info.name)],
                )
            else:
                raise ValueError(f"unknown metadata record type {kind!r}")

    def _put(self, info: TopicInfo) -> None:
        self.by_id[info.topic_id] = info
        self.by_name[info.name] = info
        self.by_collision_name[collision_name(info.name)] = info.name


def collision_name(topic: str) -> str:
    """Kafka's metric-name clash rule: topics that differ only in '.' versus '_' may not coexist."""
    return topic.replace(".", "_")


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


class MetadataLog:
    """Owns the `metadata-*` files: load (replay, migration, torn tail), append, sync, compaction."""

    def __init__(self, data_dir: Path, *, compact_bytes: int = MIN_COMPACT_BYTES) -> None:
        self.data_dir = data_dir
        self.compact_bytes = compact_bytes
        self.image = MetadataImage()
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

    def load(self) -> MetadataImage:
        """Replay the newest checkpoint and its log (migrating a `topics.json`); the topics they give."""
        for stray in self.data_dir.glob(f"{FILE_PREFIX}*.tmp"):  # a checkpoint a crash interrupted
            if stray.is_file():
                stray.unlink()
        checkpoints = self._files(CHECKPOINT_SUFFIX)
        if not checkpoints and (self.data_dir / LEGACY_FILE).exists():
            checkpoints = [self._migrate()]
        end = checkpoints[-1] if checkpoints else 0
        if checkpoints:
            self._replay_checkpoint(end)
        self._open_log(end)
        for stale in checkpoints[:-1]:
            self._path(stale, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
        for base in self._files(LOG_SUFFIX):
            if base != end:
                self._path(base, LOG_SUFFIX).unlink(missing_ok=True)
        return self.image

    def _files(self, suffix: str) -> list[int]:
        names = (
            p.name[len(FILE_PREFIX) : -len(suffix)] for p in self.data_dir.glob(f"{FILE_PREFIX}*{suffix}")
        )
        return sorted(int(n) for n in names if n.isdigit())

    @property
    def path(self) -> Path:
        """The log file appends go to."""
        return self._path(self._base, LOG_SUFFIX)

    def _path(self, offset: int, suffix: str) -> Path:
        return self.data_dir / f"{FILE_PREFIX}{offset:020d}{suffix}"

    def _replay_checkpoint(self, end: int) -> None:
        path = self._path(end, CHECKPOINT_SUFFIX)
        data = path.read_bytes()
        batches, good = decode_batches(data)
        if good != len(data):
            raise KafkaStorageError(f"metadata checkpoint {path} is corrupt at byte {good}")
        for records in batches:
            self.image.replay(records)
        self._checkpoint_size = len(data)

    def _open_log(self, base: int) -> None:
        path = self._path(base, LOG_SUFFIX)
        existed = path.exists()
        data = path.read_bytes() if existed else b""
        batches, good = decode_batches(data)
        for records in batches:
            self.image.replay(records)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not existed:
            fsync_dir(self.data_dir)
        if good != len(data):
            log.warning("metadata.torn_tail_dropped", path=str(path), bytes=len(data) - good)
            os.ftruncate(self._fd, good)
            os.fsync(self._fd)
        self._base, self._batches, self._size = base, len(batches), good

    def _migrate(self) -> int:
        """Turn an older kafkito's `topics.json` into a checkpoint; it is then renamed, not read again."""
        legacy = self.data_dir / LEGACY_FILE
        image = legacy_image(legacy)
        end = len(image.by_id)
        self._write_checkpoint(image.by_id.values(), end)
        os.replace(legacy, legacy.with_name(LEGACY_FILE + ".migrated"))
        log.info("metadata.migrated", source=str(legacy), topics=end)
        return end

    # -- writes ----------------------------------------------------------------------------------

    def append(self, records: list[Record]) -> None:
        """Write one batch at the end of the whole ones; on error nothing is applied and OSError rises.

        A failed write may leave a partial frame: the next append overwrites it, and load cuts it off.
        """
        frame = encode_batch(records)
        written = os.pwrite(self._fd, frame, self._size)
        if written != len(frame):
            raise OSError(f"short write to the metadata log ({written} of {len(frame)} bytes)")
        self.image.replay(records)
        self._size += len(frame)
        self._batches += 1
        self._written += 1

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
        """Write a checkpoint and start an empty log when the log has outgrown the last checkpoint.

        Until the new log is open the old one stays the one appended to, and a checkpoint that has no
        log after it is removed again: a restart must never prefer it to the batches appended since.
        """
        threshold = max(self.compact_bytes, self._checkpoint_size)
        if self._size < max(threshold, self._retry_at):
            return False
        self._retry_at = self._size + threshold  # if this attempt fails: not again at every change
        end = self._base + self._batches
        size = self._write_checkpoint(self.image.by_id.values(), end)
        try:
            fd = os.open(self._path(end, LOG_SUFFIX), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError:
            self._path(end, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
            raise
        with self._lock:
            old_fd, old_base, self._fd = self._fd, self._base, fd
            self._base, self._batches, self._size = end, 0, 0
            self._synced = self._written  # the checkpoint holds everything, fsynced
        self._checkpoint_size, self._retry_at = size, 0
        os.close(old_fd)
        self._path(old_base, LOG_SUFFIX).unlink(missing_ok=True)
        for stale in self._files(CHECKPOINT_SUFFIX):
            if stale != end:
                self._path(stale, CHECKPOINT_SUFFIX).unlink(missing_ok=True)
        fsync_dir(self.data_dir)
        log.info("metadata.compacted", checkpoint=end, topics=len(self.image.by_id))
        return True

    def _write_checkpoint(self, topics: Iterable[TopicInfo], end: int) -> int:
        path = self._path(end, CHECKPOINT_SUFFIX)
        tmp = path.with_name(path.name + ".tmp")
        size = 0
        with open(tmp, "wb") as f:
            for info in sorted(topics, key=lambda t: t.name):
                size += f.write(encode_batch(topic_records(info)))
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


def read_topics(data_dir: Path) -> dict[str, TopicInfo]:
    """The topics as recorded, by name, read only (for tools that look while a broker may run)."""
    files = MetadataLog(data_dir)
    checkpoints = files._files(CHECKPOINT_SUFFIX)
    if not checkpoints and (data_dir / LEGACY_FILE).exists():
        return legacy_image(data_dir / LEGACY_FILE).by_name
    end = checkpoints[-1] if checkpoints else 0
    image = MetadataImage()
    for path in (files._path(end, CHECKPOINT_SUFFIX), files._path(end, LOG_SUFFIX)):
        if path.exists():
            for records in decode_batches(path.read_bytes())[0]:
                image.replay(records)
    return image.by_name


def legacy_image(path: Path) -> MetadataImage:
    """The topics of an older kafkito's `topics.json`."""
    image = MetadataImage()
    for name, entry in json.loads(path.read_text()).get("topics", {}).items():
        info = TopicInfo(name, uuid.UUID(entry["id"]), int(entry["partitions"]), dict(entry["configs"]))
        image.replay(topic_records(info))
    return image
