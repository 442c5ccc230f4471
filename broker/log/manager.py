"""All topic logs of a broker: topic create/delete/alter, persisted topic metadata, partition lookup."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.config import default
from kafkito.broker.log.config import ConfigEntry, LogConfig, broker_defaults, describe, validate_overrides
from kafkito.broker.log.errors import (
    InvalidPartitions,
    InvalidReplicationFactor,
    InvalidTopic,
    TopicAlreadyExists,
    UnknownTopicOrPartition,
)
from kafkito.broker.log.partition_log import PartitionLog, wall_clock_ms

log = structlog.get_logger(__name__)

METADATA_FILE = "topics.json"
PARTITION_METADATA_FILE = "partition.metadata"
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_DELETED_SUFFIX = "-delete"


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic as the broker knows it: name, stable id, partition count and config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": str(self.topic_id), "partitions": self.partitions, "configs": dict(self.configs)}


def validate_topic_name(name: str) -> None:
    """Kafka's rules: 1-249 chars of [a-zA-Z0-9._-], and not "." or ".."."""
    if not name:
        raise InvalidTopic("topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopic(f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopic(f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters")
    if not _LEGAL_TOPIC.match(name):
        raise InvalidTopic(f"topic name {name!r} may only hold ASCII alphanumerics, '.', '_' and '-'")


class LogManager:
    """Owns every PartitionLog under `data_dir` and the topics file that makes topics survive restarts.

    `config` supplies broker-level defaults by Kafka property name (a mapping of dotted names, or an
    object with underscored attributes). Listeners in `on_append` are called with (topic, partition)
    after every successful append, e.g. to complete delayed fetches.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        config: Mapping[str, Any] | Any | None = None,
        *,
        time_ms: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._time_ms = time_ms
        self._defaults = broker_defaults(config)
        self.default_partitions = int(_lookup(config, "num.partitions"))
        self.default_replication_factor = int(_lookup(config, "default.replication.factor"))
        self.producer_id_expiration_ms = int(_lookup(config, "producer.id.expiration.ms"))
        self.on_append: list[Callable[[str, int], None]] = []
        self._topics: dict[str, TopicInfo] = {}
        self._by_id: dict[uuid.UUID, str] = {}
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._closed = False
        self._load()

    # -- persistence ---------------------------------------------------------------------------

    def _load(self) -> None:
        path = self.data_dir / METADATA_FILE
        if path.exists():
            doc = json.loads(path.read_text())
            for name, entry in doc.get("topics", {}).items():
                info = TopicInfo(
                    name, uuid.UUID(entry["id"]), int(entry["partitions"]), dict(entry["configs"])
                )
                self._topics[name] = info
                self._by_id[info.topic_id] = name
        self._remove_leftovers()
        for info in self._topics.values():
            config = self._log_config(info)
            for p in range(info.partitions):
                self._open_partition(info, p, config)
        log.info(
            "logs.loaded", topics=len(self._topics), partitions=len(self._logs), data_dir=str(self.data_dir)
        )

    def _remove_leftovers(self) -> None:
        """Delete directories of topics deleted (or half-created) before a crash."""
        for child in self.data_dir.iterdir():
            if not child.is_dir():
                continue
            if child.name.endswith(_DELETED_SUFFIX):
                shutil.rmtree(child, ignore_errors=True)
                continue
            m = _PARTITION_DIR.match(child.name)
            marker = child / PARTITION_METADATA_FILE
            if m is None or not marker.exists():
                continue  # not ours
            info = self._topics.get(m["topic"])
            known = info is not None and int(m["partition"]) < info.partitions
            if not known or info is None or _read_topic_id(marker) != info.topic_id:
                log.warning("logs.removed_orphan_partition", directory=child.name)
                shutil.rmtree(child, ignore_errors=True)

    def _save(self) -> None:
        doc = {"version": 1, "topics": {name: info.to_json() for name, info in sorted(self._topics.items())}}
        path = self.data_dir / METADATA_FILE
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(self.data_dir)

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def _open_partition(self, info: TopicInfo, partition: int, config: LogConfig) -> PartitionLog:
        directory = self._partition_dir(info.name, partition)
        directory.mkdir(parents=True, exist_ok=True)
        marker = directory / PARTITION_METADATA_FILE
        if not marker.exists():
            marker.write_text(f"version: 0\ntopic_id: {info.topic_id}\n")
        topic = info.name
        plog = PartitionLog(
            directory,
            config,
            topic=topic,
            partition=partition,
            time_ms=self._time_ms,
            on_append=lambda: self._fire_append(topic, partition),
        )
        self._logs[(topic, partition)] = plog
        return plog

    def _fire_append(self, topic: str, partition: int) -> None:
        for listener in list(self.on_append):
            try:
                listener(topic, partition)
            except Exception:
                log.exception("logs.append_listener_failed", topic=topic, partition=partition)

    def _log_config(self, info: TopicInfo) -> LogConfig:
        config = LogConfig.from_properties(info.configs, self._defaults)
        return replace(config, producer_id_expiration_ms=self.producer_id_expiration_ms)

    # -- topics --------------------------------------------------------------------------------

    def topics(self) -> list[TopicInfo]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def topic(self, name: str) -> TopicInfo | None:
        return self._topics.get(name)

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        name = self._by_id.get(topic_id)
        return self._topics[name] if name is not None else None

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
        *,
        validate_only: bool = False,
    ) -> TopicInfo:
        """CreateTopics for one topic; -1 partitions / replication factor take the broker defaults."""
        validate_topic_name(name)
        if name in self._topics:
            raise TopicAlreadyExists(f"topic '{name}' already exists")
        normalized = name.replace(".", "_")
        for other in self._topics:
            if other.replace(".", "_") == normalized:
                raise InvalidTopic(f"topic '{name}' collides with existing topic: {other}")
        partitions = self.default_partitions if num_partitions == -1 else num_partitions
        if partitions <= 0:
            raise InvalidPartitions("number of partitions must be larger than 0")
        rf = self.default_replication_factor if replication_factor == -1 else replication_factor
        if rf <= 0:
            raise InvalidReplicationFactor("replication factor must be larger than 0")
        if rf > 1:
            raise InvalidReplicationFactor(
                f"unable to replicate the partition {rf} time(s): only 1 broker(s) are registered"
            )
        overrides = validate_overrides(configs or {})
        info = TopicInfo(name, _new_topic_id(), partitions, overrides)
        config = self._log_config(info)
        if validate_only:
            return info
        self._topics[name] = info
        self._by_id[info.topic_id] = name
        self._save()
        for p in range(partitions):
            self._open_partition(info, p, config)
        log.info("topic.created", topic=name, partitions=partitions, topic_id=str(info.topic_id))
        return info

    def delete_topic(self, name: str) -> TopicInfo:
        """DeleteTopics: forget the topic, then remove its partition directories."""
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartition(f"topic '{name}' does not exist")
        del self._topics[name]
        del self._by_id[info.topic_id]
        self._save()
        for p in range(info.partitions):
            plog = self._logs.pop((name, p), None)
            if plog is not None:
                plog.close()
            directory = self._partition_dir(name, p)
            if directory.exists():
                doomed = directory.with_name(f"{directory.name}.{uuid.uuid4().hex}{_DELETED_SUFFIX}")
                os.replace(directory, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
        log.info("topic.deleted", topic=name, topic_id=str(info.topic_id))
        return info

    def create_partitions(self, name: str, total: int, *, validate_only: bool = False) -> TopicInfo:
        """CreatePartitions: grow a topic to `total` partitions."""
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartition(f"topic '{name}' does not exist")
        if total < info.partitions:
            raise InvalidPartitions(
                f"topic currently has {info.partitions} partitions, "
                f"which is higher than the requested {total}"
            )
        if total == info.partitions:
            raise InvalidPartitions(f"topic already has {info.partitions} partitions")
        grown = replace(info, partitions=total)
        if validate_only:
            return grown
        self._topics[name] = grown
        self._save()
        config = self._log_config(grown)
        for p in range(info.partitions, total):
            self._open_partition(grown, p, config)
        log.info("topic.partitions_created", topic=name, partitions=total)
        return grown

    # -- configs -------------------------------------------------------------------------------

    def describe_topic_config(self, name: str) -> list[ConfigEntry]:
        info = self._require(name)
        return describe(info.configs, self._defaults)

    def alter_topic_config(
        self,
        name: str,
        set_: Mapping[str, str] | None = None,
        delete: tuple[str, ...] | list[str] = (),
        *,
        validate_only: bool = False,
    ) -> TopicInfo:
        """IncrementalAlterConfigs SET/DELETE on a topic's overrides (APPEND/SUBTRACT are the caller's)."""
        info = self._require(name)
        overrides = dict(info.configs)
        for key in delete:
            validate_overrides({key: None})
            overrides.pop(key, None)
        overrides.update(validate_overrides(set_ or {}))
        return self._apply_configs(info, overrides, validate_only)

    def replace_topic_config(
        self, name: str, configs: Mapping[str, str], *, validate_only: bool = False
    ) -> TopicInfo:
        """AlterConfigs (legacy): the given overrides replace all existing ones."""
        info = self._require(name)
        return self._apply_configs(info, validate_overrides(configs), validate_only)

    def _apply_configs(self, info: TopicInfo, overrides: dict[str, str], validate_only: bool) -> TopicInfo:
        altered = replace(info, configs=overrides)
        config = self._log_config(altered)
        if validate_only:
            return altered
        self._topics[info.name] = altered
        self._save()
        for p in range(altered.partitions):
            self._logs[(info.name, p)].update_config(config)
        log.info("topic.configs_altered", topic=info.name, configs=overrides)
        return altered

    def update_broker_config(self, config: Mapping[str, Any]) -> None:
        """New broker-level defaults (dynamic broker configs): every topic without an override follows."""
        self._defaults = broker_defaults(config)
        for info in self._topics.values():
            new = self._log_config(info)
            for p in range(info.partitions):
                self._logs[(info.name, p)].update_config(new)

    def log_config(self, name: str) -> LogConfig:
        return self._log_config(self._require(name))

    def _require(self, name: str) -> TopicInfo:
        info = self._topics.get(name)
        if info is None:
            raise UnknownTopicOrPartition(f"topic '{name}' does not exist")
        return info

    # -- partitions ----------------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> PartitionLog:
        plog = self._logs.get((topic, partition))
        if plog is None:
            raise UnknownTopicOrPartition(f"{topic}-{partition} does not exist")
        return plog

    def get_log_by_id(self, topic_id: uuid.UUID, partition: int) -> PartitionLog:
        name = self._by_id.get(topic_id)
        if name is None:
            raise UnknownTopicOrPartition(f"no topic with id {topic_id}")
        return self.get_log(name, partition)

    def logs(self) -> Iterator[PartitionLog]:
        return iter(list(self._logs.values()))

    # -- periodic work -------------------------------------------------------------------------

    def enforce_retention(self, now_ms: int | None = None) -> int:
        """Retention pass over every log (the broker calls this every log.retention.check.interval.ms)."""
        now = self._time_ms() if now_ms is None else now_ms
        return sum(plog.maybe_enforce_retention(now) for plog in self.logs())

    def compact(self, now_ms: int | None = None) -> int:
        """Compact the logs with cleanup.policy=compact whose dirty ratio is due; returns how many."""
        from kafkito.broker.log import cleaner  # only when compacting: keeps it off the start-up path

        now = self._time_ms() if now_ms is None else now_ms
        return sum(cleaner.compact(plog, now) is not None for plog in self.logs() if plog.config.compact)

    def flush_due(self, now_ms: int | None = None) -> None:
        """Fsync logs whose flush.ms has elapsed."""
        now = self._time_ms() if now_ms is None else now_ms
        for plog in self.logs():
            plog.maybe_flush(now)

    def close(self) -> None:
        if self._closed:
            return
        for plog in self._logs.values():
            plog.close()
        self._logs.clear()
        self._closed = True
        log.info("logs.closed", data_dir=str(self.data_dir))


def _lookup(source: Mapping[str, Any] | Any | None, dotted: str) -> Any:
    """A broker property from `source` (dotted mapping or Config), else its default in the one table."""
    value = None
    if isinstance(source, Mapping):
        value = source.get(dotted)
    elif source is not None:
        value = getattr(source, dotted.replace(".", "_"), None)
    return default(dotted) if value is None else value


def _new_topic_id() -> uuid.UUID:
    """A random id whose base64 form does not start with '-' (Kafka avoids those for CLI tools)."""
    while True:
        topic_id = uuid.uuid4()
        if topic_id.bytes[0] >> 2 != 62:  # 62 is '-' in URL-safe base64
            return topic_id


def _read_topic_id(marker: Path) -> uuid.UUID | None:
    for line in marker.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            with contextlib.suppress(ValueError):
                return uuid.UUID(value.strip())
    return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
