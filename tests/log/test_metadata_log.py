"""The topic metadata log: replay, torn tails, migration, compaction, O(1) writes, atomic changes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.broker.log.journal import encode_batch
from kafkito.broker.log.manager import LogManager
from kafkito.broker.log.metadata_log import (
    MetadataLog,
    TopicInfo,
    config_records,
    partition_records,
    read_topics,
    remove_records,
    topic_records,
)

from .helpers import batch, read_all, records


def _topic(name: str, partitions: int = 1, **configs: str) -> TopicInfo:
    return TopicInfo(name, uuid.uuid4(), partitions, configs)


def _reload(path: Path) -> dict[str, TopicInfo]:
    again = MetadataLog(path)
    image = again.load()
    again.close()
    return dict(image.by_name)


def test_every_kind_of_change_replays_after_a_restart(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path)
    log.load()
    a, b = _topic("a", 2, **{"retention.ms": "5"}), _topic("b")
    log.append(topic_records(a))
    log.append(topic_records(b))
    log.append(partition_records(a, 2, 4))
    log.append(config_records(a, a.configs, {"cleanup.policy": "compact"}))
    log.append(remove_records(b))
    log.close()
    assert _reload(tmp_path) == {"a": TopicInfo("a", a.topic_id, 4, {"cleanup.policy": "compact"})}
    assert read_topics(tmp_path) == _reload(tmp_path)


def test_a_torn_tail_is_cut_off_and_later_appends_follow_the_last_whole_batch(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path)
    log.load()
    a = _topic("a")
    log.append(topic_records(a))
    log.close()
    [path] = tmp_path.glob("metadata-*.log")
    whole = path.stat().st_size
    with open(path, "ab") as f:  # a crash in the middle of writing the next batch
        f.write(encode_batch(topic_records(_topic("torn")))[:-7])
    with capture_logs() as events:
        log = MetadataLog(tmp_path)
        assert set(log.load().by_name) == {"a"}
    assert [e["event"] for e in events] == ["metadata.torn_tail_dropped"]
    assert path.stat().st_size == whole
    log.append(topic_records(_topic("b")))
    log.close()
    assert set(_reload(tmp_path)) == {"a", "b"}


def test_a_batch_whose_crc_does_not_match_ends_the_log(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path)
    log.load()
    log.append(topic_records(_topic("a")))
    log.append(topic_records(_topic("b")))
    log.close()
    [path] = tmp_path.glob("metadata-*.log")
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01  # inside b's JSON payload
    path.write_bytes(bytes(data))
    assert set(_reload(tmp_path)) == {"a"}


def test_topics_json_of_an_older_kafkito_is_migrated_once(tmp_path: Path) -> None:
    mgr = LogManager(tmp_path)
    info = mgr.create_topic("orders", 2, configs={"retention.ms": "1000"})
    mgr.get_log("orders", 1).append(batch(records(3)))
    mgr.close()
    for path in tmp_path.glob("metadata-*"):
        path.unlink()
    legacy = {"orders": {"id": str(info.topic_id), "partitions": 2, "configs": {"retention.ms": "1000"}}}
    (tmp_path / "topics.json").write_text(json.dumps({"version": 1, "topics": legacy}))
    assert read_topics(tmp_path)["orders"].partitions == 2

    again = LogManager(tmp_path)
    assert again.topic("orders") == info
    assert len(read_all(again.get_log("orders", 1))) == 3
    again.create_topic("later", 1)
    again.close()
    assert not (tmp_path / "topics.json").exists() and (tmp_path / "topics.json.migrated").exists()
    third = LogManager(tmp_path)
    assert [t.name for t in third.topics()] == ["later", "orders"]
    assert third.topic("orders") == info
    third.close()


def test_compaction_keeps_the_state_in_one_checkpoint_and_one_log(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path, compact_bytes=2_000)
    log.load()
    compactions = 0
    for i in range(200):
        t = _topic(f"t{i}")
        log.append(topic_records(t))
        if i % 3:
            log.append(remove_records(t))
        compactions += log.maybe_compact()
    expected = dict(log.image.by_name)
    log.close()
    assert compactions > 3
    assert len(list(tmp_path.glob("metadata-*.checkpoint"))) == 1
    assert len(list(tmp_path.glob("metadata-*.log"))) == 1
    assert _reload(tmp_path) == expected == read_topics(tmp_path)
    assert len(expected) == 67
    (tmp_path / "metadata-00000000000000099999.checkpoint.tmp").write_bytes(b"half a checkpoint")
    assert _reload(tmp_path) == expected  # a compaction a crash interrupted leaves nothing behind
    assert not list(tmp_path.glob("*.tmp"))


def test_a_compaction_that_fails_keeps_the_log_and_is_not_retried_at_every_change(tmp_path: Path) -> None:
    log = MetadataLog(tmp_path, compact_bytes=2_000)
    log.load()
    blockers = [tmp_path / f"metadata-{end:020d}.checkpoint.tmp" for end in range(1, 200)]
    for blocker in blockers:  # the checkpoint cannot be written
        blocker.mkdir()
    failures = 0
    for i in range(100):
        log.append(topic_records(_topic(f"t{i}")))
        try:
            log.maybe_compact()
        except OSError:
            failures += 1
    assert 1 <= failures <= 15  # every ~compact_bytes of growth, not at each of the 100 changes
    for blocker in blockers:
        blocker.rmdir()
    expected = dict(log.image.by_name)
    log.close()
    assert len(expected) == 100 and _reload(tmp_path) == expected
    assert not list(tmp_path.glob("metadata-*.checkpoint"))


def _bytes_written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def test_creating_a_topic_writes_as_much_with_thousands_of_topics_as_with_a_few(tmp_path: Path) -> None:
    """Work, not time: the bytes a creation writes (metadata, partition files, log line) stay flat."""
    mgr = LogManager(tmp_path)
    cost: list[int] = []
    for i in range(2_000):
        before = _bytes_written()
        mgr.create_topic(f"topic-{i:05d}", 1)
        cost.append(_bytes_written() - before)
    mgr.close()
    early, late = sorted(cost[10:60])[25], sorted(cost[-50:])[25]
    assert late <= early + 64, (early, late)


def test_on_an_event_loop_the_metadata_fsync_runs_in_a_worker_once_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    synced: list[tuple[str, bool]] = []  # (file, on the loop's thread)

    def recording_fsync(fd: int) -> None:
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), threading.current_thread() is loop_thread))
        real_fsync(fd)

    loop_thread = threading.current_thread()
    mgr = LogManager(tmp_path)

    async def one_request_creating_many() -> None:
        for i in range(50):
            mgr.create_topic(f"t{i}", 1)
        for _ in range(100):
            await asyncio.sleep(0.01)
            if any("metadata-" in path for path, _ in synced):
                return

    monkeypatch.setattr(os, "fsync", recording_fsync)
    asyncio.run(one_request_creating_many())
    metadata_syncs = [on_loop for path, on_loop in synced if "metadata-" in Path(path).name]
    assert metadata_syncs == [False]
    monkeypatch.undo()
    mgr.close()
    assert len(_reload(tmp_path)) == 50


_FAULT_SCRIPT = """
import json, os, resource, signal, sys
from pathlib import Path
from kafkito.broker.log.errors import KafkaStorageError
from kafkito.broker.log.journal import encode_batch
from kafkito.broker.log.manager import LogManager

data = Path(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
mgr = LogManager(data)
mgr.create_topic("keep", 1)
[metadata] = data.glob("metadata-*.log")
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (metadata.stat().st_size + 10, hard))
codes = []
for change in (
    lambda: mgr.create_topic("fails", 2),
    lambda: mgr.delete_topic("keep"),
    lambda: mgr.create_partitions("keep", 3),
    lambda: mgr.alter_topic_config("keep", {"retention.ms": "5"}),
):
    try:
        change()
        codes.append(0)
    except KafkaStorageError as e:
        codes.append(int(e.code))
state = {t.name: [t.partitions, dict(t.configs)] for t in mgr.topics()}
dirs = sorted(p.name for p in data.iterdir() if p.is_dir())
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
mgr.create_topic("fails", 2)
mgr.close()
print(json.dumps({"codes": codes, "state": state, "dirs": dirs}))
"""


def test_topic_changes_that_cannot_be_recorded_change_nothing(tmp_path: Path) -> None:
    """A real write failure (RLIMIT_FSIZE, like a full disk) on each kind of change: all or nothing."""
    out = subprocess.run(
        [sys.executable, "-c", _FAULT_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["codes"] == [56, 56, 56, 56]  # KAFKA_STORAGE_ERROR each time
    assert result["state"] == {"keep": [1, {}]}
    assert result["dirs"] == ["keep-0"]
    again = LogManager(tmp_path)
    assert {t.name: t.partitions for t in again.topics()} == {"keep": 1, "fails": 2}
    again.close()
