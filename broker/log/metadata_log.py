"""The topic metadata log: every topic change is one appended batch of records (O(1) each).

In the spirit of Kafka's KRaft `__cluster_metadata` log, kept in the `metadata-*` files of a
`journal.py` Journal: `metadata-<base>.log` holds the batches from offset `base` on, and
`metadata-<end>.checkpoint` every topic after the batches below `end`. The records are TopicRecord,
PartitionRecord, ConfigRecord and RemoveTopicRecord, as Kafka names them; `MetadataImage.replay` is
the one code path that turns them into topics, on load and after each append.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from kafkito.broker.log.journal import (
    CHECKPOINT_SUFFIX,
    LOG_SUFFIX,
    MIN_COMPACT_BYTES,
    Journal,
    Record,
    decode_batches,
)

log = structlog.get_logger("kafkito.metadata")

FILE_PREFIX = "metadata-"
LEGACY_FILE = "topics.json"  # kafkito before the metadata log: the whole state, rewritten per change


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


# -- the files ------------------------------------------------------------------------------------


class MetadataLog:
    """The `metadata-*` journal and the image it replays into (migrating an older `topics.json`)."""

    def __init__(self, data_dir: Path, *, compact_bytes: int = MIN_COMPACT_BYTES) -> None:
        self.data_dir = data_dir
        self.image = MetadataImage()
        self._journal = Journal(
            data_dir,
            FILE_PREFIX,
            self.image.replay,
            self._snapshot,
            compact_bytes=compact_bytes,
            name="metadata",
        )

    def load(self) -> MetadataImage:
        """Replay the newest checkpoint and its log (migrating a `topics.json`); the topics they give."""
        if not self._journal.files(CHECKPOINT_SUFFIX) and (self.data_dir / LEGACY_FILE).exists():
            self._migrate()
        self._journal.load()
        return self.image

    @property
    def path(self) -> Path:
        """The log file appends go to."""
        return self._journal.log_path

    def append(self, records: list[Record]) -> None:
        """Write one batch and apply it to the image; on OSError nothing is applied."""
        self._journal.append(records)

    @property
    def end_offset(self) -> int:
        """The offset of the next batch (DescribeQuorum reports it as the metadata log's end)."""
        return self._journal.end_offset

    @property
    def dirty(self) -> bool:
        return self._journal.dirty

    def sync(self) -> None:
        """Fsync the appends made so far (callable from a worker thread)."""
        self._journal.sync()

    def maybe_compact(self) -> bool:
        """Checkpoint every topic and start an empty log once the log has outgrown the checkpoint."""
        return self._journal.maybe_compact()

    def close(self) -> None:
        self._journal.close()

    def _snapshot(self) -> Iterable[list[Record]]:
        return (topic_records(info) for info in sorted(self.image.by_id.values(), key=lambda t: t.name))

    def _migrate(self) -> None:
        """Turn an older kafkito's `topics.json` into a checkpoint; it is then renamed, not read again."""
        legacy = self.data_dir / LEGACY_FILE
        image = legacy_image(legacy)
        topics = sorted(image.by_id.values(), key=lambda t: t.name)
        self._journal.write_checkpoint(len(topics), (topic_records(info) for info in topics))
        os.replace(legacy, legacy.with_name(LEGACY_FILE + ".migrated"))
        log.info("metadata.migrated", source=str(legacy), topics=len(topics))


def read_topics(data_dir: Path) -> dict[str, TopicInfo]:
    """The topics as recorded, by name, read only (for tools that look while a broker may run)."""
    files = Journal(data_dir, FILE_PREFIX, lambda records: None, lambda: ())
    checkpoints = files.files(CHECKPOINT_SUFFIX)
    if not checkpoints and (data_dir / LEGACY_FILE).exists():
        return legacy_image(data_dir / LEGACY_FILE).by_name
    end = checkpoints[-1] if checkpoints else 0
    image = MetadataImage()
    for path in (files.path(end, CHECKPOINT_SUFFIX), files.path(end, LOG_SUFFIX)):
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
