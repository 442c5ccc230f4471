"""A topic creation that fails half-way (a file where a partition's directory goes) leaves no ghost topic.

The client gets KAFKA_STORAGE_ERROR on a connection that stays open, the log has one error line and no
traceback, the topic is in neither Metadata nor the data dir, and it can be created after a restart.
The broker runs at a file-handle limit (via `prlimit`) below the topic's partition count: segment
files are opened on demand (broker/log/file_handles.py), so that is no reason to fail.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import wait_for_ready_file
from tests.support.wire import WireClient

# A topic of BIG partitions held a handle per partition, more than LIMIT allows, before segment files
# were opened on demand.
LIMIT = 160
BIG = 200


class Serve:
    """`python -m kafkito serve` under `prlimit --nofile`, logging JSON lines to a file."""

    def __init__(self, data_dir: Path, log_path: Path) -> None:
        self.data_dir = data_dir
        self.log_path = log_path
        self.port = 0  # a free one, bound by the child; the same one again on a restart
        self.ready_path = data_dir.parent / f"{data_dir.name}-ready.json"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, nofile: int, *props: str) -> Serve:
        cmd = [
            "prlimit", f"--nofile={nofile}:{nofile}", "--",
            sys.executable, "-m", "kafkito", "serve", "--port", str(self.port),
            "--data-dir", str(self.data_dir), "--log-format", "json", "--ready-file", str(self.ready_path),
        ]  # fmt: skip
        for prop in props:
            cmd += ["--set", prop]
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        self.port = wait_for_ready_file(self.ready_path, self.proc)["port"]
        return self

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.proc = None
        return code

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.startswith("{")]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    if shutil.which("prlimit") is None:
        pytest.fail("prlimit (util-linux) is needed to run the broker at a file-handle limit")
    broker = Serve(tmp_path / "data", tmp_path / "broker.log")
    yield broker
    broker.kill()


def _create(client: WireClient, name: str, partitions: int) -> Any:
    topic = dict(name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
    [result] = client.request(19, 4, topics=[topic], timeout_ms=10_000, validate_only=False).topics
    return result


def _metadata(client: WireClient, names: list[str] | None, auto_create: bool = False) -> dict[str, Any]:
    topics = None if names is None else [dict(name=n) for n in names]
    response = client.request(
        3,
        9,
        topics=topics,
        allow_auto_topic_creation=auto_create,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
    )
    return {t.name: t for t in response.topics}


def _block_partition(data_dir: Path, topic: str, partition: int) -> Path:
    """A file where the partition's directory must go: its creation fails (ENOTDIR)."""
    obstacle = data_dir / f"{topic}-{partition}"
    obstacle.write_text("in the way")
    return obstacle


def _partition_dirs(data_dir: Path, topic: str) -> list[Path]:
    return [p for p in data_dir.glob(f"{topic}-*") if p.is_dir()]


def _assert_no_traceback(events: list[dict[str, Any]]) -> None:
    assert not [e for e in events if "exception" in e or "Traceback" in json.dumps(e)]


def test_creation_failing_half_way_leaves_no_ghost(serve: Serve) -> None:
    serve.start(LIMIT)
    obstacle = _block_partition(serve.data_dir, "ghost", BIG // 2)
    with WireClient(serve.bootstrap) as client:
        result = _create(client, "ghost", BIG)
        assert result.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        assert "Not a directory" in result.error_message
        # The same connection answers on: the topic exists nowhere.
        assert "ghost" not in _metadata(client, None)
        assert _metadata(client, ["ghost"])["ghost"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert _create(client, "small", 2).error_code == ErrorCode.NONE
    assert _partition_dirs(serve.data_dir, "ghost") == []
    events = serve.events()
    _assert_no_traceback(events)
    errors = [e for e in events if e["level"] == "error"]
    assert errors and all(e["topic"] == "ghost" for e in errors)
    assert serve.stop() == 0

    obstacle.unlink()
    serve.start(LIMIT)
    with WireClient(serve.bootstrap) as client:
        assert _create(client, "ghost", BIG).error_code == ErrorCode.NONE
        found = _metadata(client, None)
        assert len(found["ghost"].partitions) == BIG and len(found["small"].partitions) == 2
    assert serve.stop() == 0
    _assert_no_traceback(serve.events())


def test_auto_creation_failing_half_way_answers_the_metadata_request(serve: Serve) -> None:
    serve.start(LIMIT, f"num.partitions={BIG}")
    _block_partition(serve.data_dir, "auto", BIG // 2)
    with WireClient(serve.bootstrap) as client:
        entry = _metadata(client, ["auto"], auto_create=True)["auto"]
        assert entry.error_code == ErrorCode.KAFKA_STORAGE_ERROR
        assert _metadata(client, ["auto"])["auto"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert _partition_dirs(serve.data_dir, "auto") == []
    _assert_no_traceback(serve.events())
    assert serve.stop() == 0
