"""LogManager: topics with partitions and configs that survive restarts, admin errors, append hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkito.broker.log.config import ConfigSource, LogConfig
from kafkito.broker.log.errors import (
    InvalidConfig,
    InvalidPartitions,
    InvalidReplicationFactor,
    InvalidTopic,
    TopicAlreadyExists,
    UnknownTopicOrPartition,
)
from kafkito.broker.log.manager import LogManager
from kafkito.broker.log.metadata_log import MetadataLog, remove_records
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import Rec, batch, read_all, records


def test_topics_partitions_ids_configs_and_data_survive_restart(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    info = mgr.create_topic("orders", 3, configs={"retention.ms": "1000", "cleanup.policy": "compact,delete"})
    mgr.get_log("orders", 2).append(batch(records(5)))
    mgr.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["orders-0", "orders-1", "orders-2"]
    again = LogManager(tmp_path)
    [t] = again.topics()
    assert (t.name, t.topic_id, t.partitions) == ("orders", info.topic_id, 3)
    assert t.configs == {"retention.ms": "1000", "cleanup.policy": "compact,delete"}
    assert again.log_config("orders").retention_ms == 1000
    assert again.log_config("orders").cleanup_policy == {"compact", "delete"}
    assert again.topic_by_id(info.topic_id) == t
    assert [r for _, r in read_all(again.get_log_by_id(info.topic_id, 2))] == records(5)
    again.close()


def test_create_topic_errors(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("a.b", 1)
    with pytest.raises(TopicAlreadyExists) as e:
        mgr.create_topic("a.b", 1)
    assert e.value.code == 36
    with pytest.raises(InvalidTopic) as e2:
        mgr.create_topic("a_b", 1)  # collides with a.b in metric names, as Kafka refuses
    assert e2.value.code == 17
    for bad in ("", ".", "..", "x" * 250, "spaces here", "slash/es"):
        with pytest.raises(InvalidTopic):
            mgr.create_topic(bad, 1)
    with pytest.raises(InvalidPartitions) as e3:
        mgr.create_topic("zero", 0)
    assert e3.value.code == 37
    with pytest.raises(InvalidReplicationFactor) as e4:
        mgr.create_topic("rf3", 1, replication_factor=3)
    assert e4.value.code == 38
    with pytest.raises(InvalidConfig) as e5:
        mgr.create_topic("cfg", 1, configs={"no.such.config": "1"})
    assert e5.value.code == 40
    for name, value in [("retention.ms", "soon"), ("cleanup.policy", "shred"), ("segment.bytes", "1")]:
        with pytest.raises(InvalidConfig):
            mgr.create_topic("cfg", 1, configs={name: value})
    assert [t.name for t in mgr.topics()] == ["a.b"]


def test_validate_only_changes_nothing(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    info = mgr.create_topic("dry", 4, validate_only=True)
    assert info.partitions == 4
    assert mgr.topics() == [] and not (tmp_path / "dry-0").exists()


def test_defaults_come_from_broker_properties(tmp_path: Path) -> None:
    props = {
        "num.partitions": 2,
        "log.segment.bytes": 12345,
        "log.retention.hours": 2,
        "message.max.bytes": 777,
    }
    mgr = LogManager(tmp_path, props)
    info = mgr.create_topic("d")
    assert info.partitions == 2
    cfg = mgr.log_config("d")
    assert (cfg.segment_bytes, cfg.retention_ms, cfg.max_message_bytes) == (12345, 7_200_000, 777)
    entries = {e.name: e for e in mgr.describe_topic_config("d")}
    assert entries["segment.bytes"].value == "12345"
    assert entries["segment.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert entries["retention.bytes"].is_default and entries["retention.bytes"].value == "-1"

    class Cfg:
        log_segment_bytes = 999
        num_partitions = 3

    other = LogManager(tmp_path / "obj", Cfg())
    assert other.create_topic("o").partitions == 3
    assert other.log_config("o").segment_bytes == 999


def test_alter_configs_apply_to_live_logs_and_persist(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("t", 2, configs={"retention.ms": "5000"})
    mgr.alter_topic_config("t", {"message.timestamp.type": "LogAppendTime"}, delete=["retention.ms"])
    assert mgr.get_log("t", 1).config.log_append_time
    assert mgr.get_log("t", 1).config.retention_ms == LogConfig().retention_ms
    entries = {e.name: e for e in mgr.describe_topic_config("t")}
    assert entries["message.timestamp.type"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    with pytest.raises(InvalidConfig):
        mgr.alter_topic_config("t", {"max.message.bytes": "-5"})
    mgr.replace_topic_config("t", {"segment.bytes": "100000"}, validate_only=True)
    assert mgr.topic("t").configs == {"message.timestamp.type": "LogAppendTime"}  # type: ignore[union-attr]
    mgr.close()
    assert LogManager(tmp_path).get_log("t", 0).config.log_append_time


def test_create_partitions_grows_a_topic(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("g", 1)
    mgr.get_log("g", 0).append(batch(2))
    assert mgr.create_partitions("g", 3).partitions == 3
    assert mgr.get_log("g", 2).log_end_offset == 0
    with pytest.raises(InvalidPartitions):
        mgr.create_partitions("g", 3)
    with pytest.raises(InvalidPartitions):
        mgr.create_partitions("g", 2)
    with pytest.raises(UnknownTopicOrPartition):
        mgr.create_partitions("nope", 2)
    mgr.close()
    again = LogManager(tmp_path)
    assert again.topic("g").partitions == 3  # type: ignore[union-attr]
    assert again.get_log("g", 0).log_end_offset == 2


def test_delete_topic_removes_its_data_and_a_new_topic_starts_empty(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    old = mgr.create_topic("t", 2)
    mgr.get_log("t", 0).append(batch(4))
    assert mgr.delete_topic("t").topic_id == old.topic_id
    assert not any(tmp_path.glob("t-*"))
    with pytest.raises(UnknownTopicOrPartition) as e:
        mgr.get_log("t", 0)
    assert e.value.code == 3
    with pytest.raises(UnknownTopicOrPartition):
        mgr.delete_topic("t")
    new = mgr.create_topic("t", 1)
    assert new.topic_id != old.topic_id
    assert mgr.get_log("t", 0).log_end_offset == 0


def test_partition_dirs_left_by_a_crash_during_delete_are_removed(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("keep", 1)
    mgr.create_topic("gone", 2)
    mgr.get_log("gone", 1).append(batch(3))
    gone = mgr.topic("gone")
    mgr.close()
    # Simulate a crash after the removal was recorded but before the directories were removed.
    metadata = MetadataLog(tmp_path)
    metadata.load()
    assert gone is not None
    metadata.append(remove_records(gone))
    metadata.close()
    (tmp_path / "half.abc-delete").mkdir()
    (tmp_path / "unrelated-0").mkdir()  # not ours: no partition.metadata
    again = LogManager(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["keep-0", "unrelated-0"]
    again.create_topic("gone", 2)
    assert again.get_log("gone", 1).log_end_offset == 0


def test_append_listeners_hear_topic_and_partition(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("t", 2)
    heard: list[tuple[str, int]] = []
    mgr.on_append.append(lambda t, p: heard.append((t, p)))
    mgr.on_append.append(lambda t, p: 1 / 0)  # a failing listener does not break the append
    mgr.get_log("t", 1).append(batch(1))
    mgr.get_log("t", 0).append(batch(1))
    assert heard == [("t", 1), ("t", 0)]


def test_enforce_retention_runs_over_all_logs(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path, time_ms=lambda: 0)
    mgr.create_topic("r", 2, configs={"retention.ms": "10", "segment.bytes": "200"})
    for p in (0, 1):
        for i in range(3):
            mgr.get_log("r", p).append(batch(records(1, ts=i, size=60)))
    assert mgr.enforce_retention(now_ms=1_000) == 6
    assert all(plog.log_start_offset == 3 for plog in mgr.logs())


def test_compaction_pass_runs_over_compacted_topics_only(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    mgr.create_topic("c", 1, configs={"cleanup.policy": "compact", "segment.bytes": "300"})
    mgr.create_topic("d", 1, configs={"segment.bytes": "300"})
    for name in ("c", "d"):
        for i in range(10):
            mgr.get_log(name, 0).append(batch([Rec(b"same", b"v%d" % i, 1_700_000_000_000)]))
    assert mgr.compact() == 1
    assert len(read_all(mgr.get_log("c", 0))) < 10 == len(read_all(mgr.get_log("d", 0)))


def test_a_created_partition_is_the_log_opening_its_empty_directory_gives(tmp_path: Path) -> None:
    """Creating a partition skips `_open`'s reads and recovery: what it makes is what `_open` makes."""
    mgr = LogManager(tmp_path / "created")
    mgr.create_topic("t", 1)
    created = mgr.get_log("t", 0)
    opened = PartitionLog(tmp_path / "opened" / "t-0", created.config)

    def state(plog: PartitionLog) -> tuple[object, ...]:
        files = sorted(p.name for p in plog.directory.iterdir() if p.name != "partition.metadata")
        return (
            files,
            plog.log_start_offset,
            plog.log_end_offset,
            plog.last_stable_offset,
            plog.size_bytes,
            plog.producer_snapshot(),
            plog.aborted_transactions(0, 1),
        )

    assert state(created) == state(opened)
    for plog in (created, opened):
        plog.append(batch(records(3)))
    assert state(created) == state(opened)
    assert [r for _, r in read_all(created)] == [r for _, r in read_all(opened)] == records(3)
    opened.close()
    mgr.close()
