"""All topic logs of a broker: topic create/delete/alter (atomic, via the metadata log), partition lookup."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.config import default
from kafkito.broker.log.config import ConfigEntry, LogConfig, broker_defaults, describe, validate_overrides
from kafkito.broker.log.errors import (
    InvalidPartitions,
    InvalidReplicationFactor,
    InvalidTopic,
    KafkaStorageError,
    LogError,
    TopicAlreadyExists,
    UnknownTopicOrPartition,
)
from kafkito.broker.log.file_handles import raise_open_files_limit
from kafkito.broker.log.journal import Record
from kafkito.broker.log.metadata_log import (
    MetadataLog,
    TopicInfo,
    collision_name,
    config_records,
    partition_records,
    remove_records,
    topic_records,
)
from kafkito.broker.log.partition_log import PartitionLog, wall_clock_ms
from kafkito.broker.log.storage import LogDirHealth
from kafkito.broker.log.topic_creation import TopicCreation

log = structlog.get_logger(__name__)

PARTITION_METADATA_FILE = "partition.metadata"
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_DELETED_SUFFIX = "-delete"

__all__ = ["LogManager", "TopicInfo", "validate_topic_name"]


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
    """Owns every PartitionLog under `data_dir` and the metadata log that makes topics survive restarts.

    Topic changes are all or nothing: the partitions are opened first, then the change is appended to
    the metadata log, and only then is it visible; a failure undoes what was done and raises
    `KafkaStorageError` (KAFKA_STORAGE_ERROR). Appends are fsynced in a worker thread, batched, when an
    event loop runs (at once otherwise), and on close.

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
        # Descriptors for thousands of partitions: the soft limit up to the hard one (once per process
        # in effect), and the segments' LRU of open files sized from it (file_handles.py).
        raise_open_files_limit()
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._time_ms = time_ms
        self._defaults = broker_defaults(config)
        self.default_partitions = int(_lookup(config, "num.partitions"))
        self.default_replication_factor = int(_lookup(config, "default.replication.factor"))
        self.registered_brokers = 1  # the live nodes of a multi-node cluster (broker/cluster), set by it
        self.producer_id_expiration_ms = int(_lookup(config, "producer.id.expiration.ms"))
        self.on_append: list[Callable[[str, int], None]] = []
        # Told (name, replication factor) after a topic is created and (name, None) after it is deleted.
        self.on_topic: list[Callable[[str, int | None], None]] = []
        self._metadata = MetadataLog(self.data_dir)
        self._image = self._metadata.load()
        self._topics = self._image.by_name  # the metadata log's image: the one truth about topics
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        # Topics whose partitions are being created off the event loop (topic_creation.py), by their
        # collision name: their names are taken, though the topics are not visible yet.
        self.creating: dict[str, str] = {}
        self.creation = TopicCreation(self)
        self.dir_health = LogDirHealth(self.data_dir)  # one per log dir: a fatal I/O error takes it offline
        self._sync_scheduled = False
        self._closed = False
        self._remove_leftovers()
        for info in self._topics.values():
            config_ = self._log_config(info)
            for p in range(info.partitions):
                self._logs[(info.name, p)] = self._open_partition(info, p, config_)
        log.info(
            "logs.loaded", topics=len(self._topics), partitions=len(self._logs), data_dir=str(self.data_dir)
        )

    # -- persistence ---------------------------------------------------------------------------

    def _remove_leftovers(self) -> None:
        """Delete directories of topics deleted (or half-created) before a crash."""
        with os.scandir(self.data_dir) as entries:  # is_dir() from the listing: no stat each
            children = [Path(entry.path) for entry in entries if entry.is_dir()]
        for child in children:
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

    def _commit(self, records: list[Record], action: str, topic: str) -> None:
        """Append one change to the metadata log (all or nothing); KafkaStorageError if it fails."""
        try:
            self._metadata.append(records)
        except OSError as e:
            log.error(
                "metadata.write_failed",
                action=action,
                topic=topic,
                path=str(self._metadata.path),
                error=str(e),
            )
            raise KafkaStorageError(f"could not record the {action} of topic '{topic}': {e}") from e
        self._schedule_sync()
        try:
            self._metadata.maybe_compact()
        except OSError as e:  # the change is recorded; compaction is retried after the next one
            log.error("metadata.compaction_failed", path=str(self._metadata.path), error=str(e))

    def _schedule_sync(self) -> None:
        """Fsync the metadata log in a worker thread once the current request's changes are made."""
        if self._sync_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._metadata.sync()
            return
        self._sync_scheduled = True
        loop.call_soon(self._start_sync, loop)

    def _start_sync(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_in_executor(None, self._metadata.sync).add_done_callback(self._sync_done)

    def _sync_done(self, done: asyncio.Future[None]) -> None:
        self._sync_scheduled = False
        if not done.cancelled() and done.exception() is not None:
            log.error("metadata.sync_failed", path=str(self._metadata.path), error=str(done.exception()))
        elif self._metadata.dirty and not self._closed:
            self._schedule_sync()

    def _partition_dir(self, topic: str, partition: int) -> Path:
        return self.data_dir / f"{topic}-{partition}"

    def _open_partition(
        self, info: TopicInfo, partition: int, config: LogConfig, *, new: bool = False
    ) -> PartitionLog:
        directory = self._partition_dir(info.name, partition)
        if new and directory.exists():  # left by a failed or crashed creation: never a live partition
            shutil.rmtree(directory)
        marker = directory / PARTITION_METADATA_FILE
        if new or not marker.exists():  # (with its marker, the directory exists: a restart's case)
            directory.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"version: 0\ntopic_id: {info.topic_id}\n")
        topic = info.name
        return PartitionLog(
            directory,
            config,
            topic=topic,
            partition=partition,
            time_ms=self._time_ms,
            on_append=lambda: self._fire_append(topic, partition),
            dir_health=self.dir_health,
            new=new,
        )

    def open_partitions(self, info: TopicInfo, partitions: range) -> dict[tuple[str, int], PartitionLog]:
        """Create and open partitions of a change; on any failure, close and remove them all again.

        Touches no state of the manager's: a worker thread may run it (topic_creation.py)."""
        config = self._log_config(info)
        opened: dict[tuple[str, int], PartitionLog] = {}
        for p in partitions:
            try:
                opened[(info.name, p)] = self._open_partition(info, p, config, new=True)
            except (OSError, LogError) as e:
                self.discard_partitions(opened, info, partitions)
                path = str(self._partition_dir(info.name, p))
                log.error("topic.partition_create_failed", topic=info.name, path=path, error=str(e))
                raise KafkaStorageError(f"could not create partition {p} of topic '{info.name}': {e}") from e
        return opened

    def discard_partitions(
        self, opened: Mapping[tuple[str, int], PartitionLog], info: TopicInfo, partitions: range
    ) -> None:
        """Undo `open_partitions` (no flush: nothing is kept); what stays is an orphan at start-up."""
        for plog in opened.values():
            with contextlib.suppress(OSError, LogError):
                plog.delete()
        for p in partitions:
            shutil.rmtree(self._partition_dir(info.name, p), ignore_errors=True)

    def _fire_append(self, topic: str, partition: int) -> None:
        for listener in list(self.on_append):
            try:
                listener(topic, partition)
            except Exception:
                log.exception("logs.append_listener_failed", topic=topic, partition=partition)

    def _log_config(self, info: TopicInfo) -> LogConfig:
        config = LogConfig.from_properties(info.configs, self._defaults)
        return replace(config, producer_id_expiration_ms=self.producer_id_expiration_ms)

    @property
    def metadata_end_offset(self) -> int:
        """The end offset of the topic metadata log (batches written since it began)."""
        return self._metadata.end_offset

    # -- topics --------------------------------------------------------------------------------

    def topics(self) -> list[TopicInfo]:
        return sorted(self._topics.values(), key=lambda t: t.name)

    def topic(self, name: str) -> TopicInfo | None:
        return self._topics.get(name)

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return self._image.by_id.get(topic_id)

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
        """CreateTopics for one topic; -1 partitions / replication factor take the broker defaults.

        Everything happens before this returns (internal topics, auto-creation); CreateTopics itself
        creates large topics off the event loop with `topic_creation.TopicCreation`."""
        info, rf = self.new_topic(name, num_partitions, replication_factor, configs)
        if validate_only:
            return info
        opened = self.open_partitions(info, range(info.partitions))
        self.install_topic(info, rf, opened)
        return info

    def new_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
    ) -> tuple[TopicInfo, int]:
        """The topic a creation would make, and its replication factor, checked as Kafka checks them."""
        validate_topic_name(name)
        if name in self._topics or name in self.creating.values():
            raise TopicAlreadyExists(f"topic '{name}' already exists")
        collides = collision_name(name)
        other = self._image.by_collision_name.get(collides) or self.creating.get(collides)
        if other is not None:
            raise InvalidTopic(f"topic '{name}' collides with existing topic: {other}")
        partitions = self.default_partitions if num_partitions == -1 else num_partitions
        if partitions <= 0:
            raise InvalidPartitions("number of partitions must be larger than 0")
        rf = self.default_replication_factor if replication_factor == -1 else replication_factor
        if rf <= 0:
            raise InvalidReplicationFactor("replication factor must be larger than 0")
        if rf > self.registered_brokers:
            raise InvalidReplicationFactor(
                f"unable to replicate the partition {rf} time(s): "
                f"only {self.registered_brokers} broker(s) are registered"
            )
        info = TopicInfo(name, _new_topic_id(), partitions, validate_overrides(configs or {}))
        self._log_config(info)  # the overrides must resolve
        return info, rf

    def install_topic(self, info: TopicInfo, rf: int, opened: dict[tuple[str, int], PartitionLog]) -> None:
        """Record a new topic whose partitions are open: from now on it is visible (or, on a
        KafkaStorageError, the partitions are removed again and nothing changed)."""
        name = info.name
        try:
            if self._closed:
                raise KafkaStorageError(f"could not record the creation of topic '{name}': logs are closed")
            self._commit(topic_records(info), "creation", name)
        except KafkaStorageError:
            self.discard_partitions(opened, info, range(info.partitions))
            raise
        self._logs.update(opened)
        log.info("topic.created", topic=name, partitions=info.partitions, topic_id=str(info.topic_id))
        for listener in self.on_topic:
            listener(name, rf)

    def delete_topic(self, name: str) -> TopicInfo:
        """DeleteTopics: record the removal, then close and remove the partition directories."""
        info = self._require(name)
        self._commit(remove_records(info), "deletion", name)
        for listener in self.on_topic:
            listener(name, None)
        for p in range(info.partitions):
            plog = self._logs.pop((name, p), None)
            try:
                if plog is not None:
                    plog.delete()  # its files go: nothing to flush
                directory = self._partition_dir(name, p)
                if directory.exists():
                    doomed = directory.with_name(f"{directory.name}.{uuid.uuid4().hex}{_DELETED_SUFFIX}")
                    os.replace(directory, doomed)
                    shutil.rmtree(doomed, ignore_errors=True)
            except (OSError, LogError) as e:  # the topic is gone; what is left is removed at start-up
                log.error("topic.partition_remove_failed", topic=name, partition=p, error=str(e))
        log.info("topic.deleted", topic=name, topic_id=str(info.topic_id))
        return info

    def create_partitions(self, name: str, total: int, *, validate_only: bool = False) -> TopicInfo:
        """CreatePartitions: grow a topic to `total` partitions."""
        info = self._require(name)
        grown = self.grown_topic(info, total)
        if validate_only:
            return grown
        opened = self.open_partitions(grown, range(info.partitions, total))
        self.install_partitions(info, grown, opened)
        return grown

    @staticmethod
    def grown_topic(info: TopicInfo, total: int) -> TopicInfo:
        """`info` with `total` partitions, if that is growth (INVALID_PARTITIONS otherwise)."""
        if total < info.partitions:
            raise InvalidPartitions(
                f"The topic {info.name} currently has {info.partitions} partition(s); "
                f"{total} would not be an increase."
            )
        if total == info.partitions:
            raise InvalidPartitions(f"Topic already has {info.partitions} partition(s).")
        return replace(info, partitions=total)

    def install_partitions(
        self, info: TopicInfo, grown: TopicInfo, opened: dict[tuple[str, int], PartitionLog]
    ) -> TopicInfo:
        """Record the growth of `info` (as it was when the partitions were opened) to `grown`'s count;
        the topic as it is now. If the topic changed meanwhile (deleted, grown by another request)
        or the change cannot be recorded, the new partitions are removed again and this raises."""
        name, added = info.name, range(info.partitions, grown.partitions)
        try:
            current = self._topics.get(name)
            if current is None or current.topic_id != info.topic_id:
                raise UnknownTopicOrPartition(f"topic '{name}' was deleted while its partitions were created")
            if current.partitions != info.partitions:
                raise InvalidPartitions(f"topic '{name}' now has {current.partitions} partitions")
            if self._closed:
                raise KafkaStorageError(
                    f"could not record the partition creation of '{name}': logs are closed"
                )
            grown = replace(current, partitions=grown.partitions)
            self._commit(
                partition_records(grown, info.partitions, grown.partitions), "partition creation", name
            )
        except LogError:
            self.discard_partitions(opened, grown, added)
            raise
        config = self._log_config(grown)  # the topic's configs may have changed while they were opened
        for plog in opened.values():
            plog.update_config(config)
        self._logs.update(opened)
        log.info("topic.partitions_created", topic=name, partitions=grown.partitions)
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
        self._commit(config_records(info, info.configs, overrides), "config change", info.name)
        for p in range(altered.partitions):
            self._logs[(info.name, p)].update_config(config)
        log.info("topic.configs_altered", topic=info.name, configs=overrides)
        return altered

    def update_broker_config(self, config: Mapping[str, Any]) -> None:
        """New broker-level defaults (dynamic broker configs): every topic without an override follows."""
        self._defaults = broker_defaults(config)
        self.producer_id_expiration_ms = int(_lookup(config, "producer.id.expiration.ms"))
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
        info = self._image.by_id.get(topic_id)
        if info is None:
            raise UnknownTopicOrPartition(f"no topic with id {topic_id}")
        return self.get_log(info.name, partition)

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
        self._metadata.close()
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
