"""A broker whose process may open 1,024 files serves thousands of partitions: segment files are opened
on demand through a bounded LRU (broker/log/file_handles.py). The soft limit equals the hard one here,
so raising it at start changes nothing: only the LRU keeps the broker within it."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer, TopicPartition

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import wait_for_ready_file
from tests.support.waiting import wait_until
from tests.support.wire import WireClient
from tests.topics_scale.wire_admin import create_topics

FILES = 1_024
TOPICS = 3
PARTITIONS = 1_000  # per topic: 3,000 in all, three times what the process may hold open


def _limit_open_files() -> None:  # runs in the child, before `kafkito serve`
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, FILES))


@pytest.fixture
def limited_broker(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    ready = tmp_path / "ready.json"
    cmd = [
        sys.executable, "-m", "kafkito", "serve", "--host", "127.0.0.1", "--port", "0",
        "--data-dir", str(tmp_path / "data"), "--log-format", "json", "--ready-file", str(ready),
    ]  # fmt: skip
    with open(tmp_path / "broker.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_limit_open_files)
    try:
        port = wait_for_ready_file(ready, proc)["port"]
        yield f"127.0.0.1:{port}", proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_a_broker_limited_to_1024_open_files_serves_3000_partitions(
    limited_broker: tuple[str, subprocess.Popen[bytes]],
) -> None:
    bootstrap, proc = limited_broker
    assert (
        f"Max open files            {FILES}                 {FILES}"
        in Path(f"/proc/{proc.pid}/limits").read_text()
    )
    topics = [f"wide-{i}" for i in range(TOPICS)]
    with WireClient(bootstrap, timeout=120) as admin:
        results = create_topics(admin, *((name, PARTITIONS) for name in topics))
        assert [(r.name, r.error_code, r.error_message) for r in results] == [
            (name, ErrorCode.NONE, None) for name in topics
        ]

    failed: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    expected = {(name, p): f"{name}/{p}".encode() for name in topics for p in range(PARTITIONS)}
    for (name, p), value in expected.items():
        producer.produce(name, value, partition=p, on_delivery=lambda err, _msg: err and failed.append(err))
        producer.poll(0)
    assert producer.flush(60) == 0
    assert failed == []

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "wide-reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(name, p, OFFSET_BEGINNING) for name, p in expected])
    got: dict[tuple[str, int], bytes | None] = {}

    def read_all() -> bool:
        for msg in consumer.consume(1_000, timeout=0.5):
            assert msg.error() is None, msg.error()
            got[(_topic(msg), _partition(msg))] = msg.value()
        return len(got) == len(expected)

    try:
        wait_until(read_all, what="a record from every partition", detail=lambda: f"{len(got)} read")
    finally:
        consumer.close()
    assert got == expected
    assert proc.poll() is None  # still serving


def _topic(msg: Message) -> str:
    topic = msg.topic()
    assert topic is not None
    return topic


def _partition(msg: Message) -> int:
    partition = msg.partition()
    assert partition is not None
    return partition
