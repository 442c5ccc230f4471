"""Real storage failures under a real Produce: the client gets KAFKA_STORAGE_ERROR, the broker logs the
failure at error level with the file's path, and a fatal one takes the log dir offline until a restart,
as Kafka does."""

from __future__ import annotations

import json
import resource
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

from .test_durability import StartBroker

PRODUCE = 0
KAFKA_STORAGE_ERROR = 56


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """RLIMIT_FSIZE for the processes started inside (as `prlimit --fsize`); Python ignores SIGXFSZ,
    so a write past the limit fails with EFBIG, as a full disk fails with ENOSPC."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def batch(size: int, n: int = 1) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        builder.append(i, timestamp=None, key=b"k%d" % i, value=b"v" * (size // n), headers=[])
    return bytes(builder.build())


def produce(wire: WireClient, topic: str, records: bytes) -> int:
    """One acks=-1 Produce of `records` to partition 0; its error code."""
    r = wire.request(
        PRODUCE, 8, transactional_id=None, acks=-1, timeout_ms=5000,
        topic_data=[dict(name=topic, partition_data=[dict(index=0, records=records)])],
    )  # fmt: skip
    return int(r.responses[0].partition_responses[0].error_code)


def create_topic(p: ProcessBroker, name: str, **configs: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": p.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(10)


def events(p: ProcessBroker, name: str) -> list[dict[str, Any]]:
    out = []
    for line in p.log_path.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == name:
            out.append(event)
    return out


def test_a_write_past_the_file_size_limit_is_logged_and_the_dir_stays_online(
    broker_process: StartBroker,
) -> None:
    with file_size_limit(200_000):
        p = broker_process()
    create_topic(p, "full")
    create_topic(p, "other")
    with WireClient(p.bootstrap) as wire:
        codes = [produce(wire, "full", batch(50_000, 10)) for _ in range(3)]
        assert codes == [0, 0, 0]
        failed = [produce(wire, "full", batch(60_000, 10)) for _ in range(20)]
        assert failed == [KAFKA_STORAGE_ERROR] * 20
        # Not fatal: the failed writes were rolled back, the dir stays online.
        assert produce(wire, "other", batch(100)) == 0
        assert produce(wire, "full", batch(100)) == 0
    segment = p.data_dir / "full-0" / "00000000000000000000.log"
    logged = events(p, "log.storage_error")
    assert logged, "a storage error is logged"
    for event in logged:  # (as many as the broker's log rate limit lets through)
        assert event["level"] == "error" and event["path"] == str(segment)
        assert (event["op"], event["errno"], event["fatal"]) == ("write", "EFBIG", False)
        assert (event["topic"], event["partition"]) == ("full", 0)
    assert not events(p, "log.dir_offline")
    assert p.stop() == 0
    p.start()  # nothing torn was left behind
    assert not events(p, "log.truncated_invalid_tail") and not events(p, "log.corrupt_data_skipped")


def test_a_fatal_storage_error_takes_the_log_dir_offline_until_a_restart(broker_process: StartBroker) -> None:
    p = broker_process()
    create_topic(p, "lost", **{"segment.bytes": "1000"})
    create_topic(p, "bystander")
    with WireClient(p.bootstrap) as wire:
        assert produce(wire, "lost", batch(600)) == 0
        assert produce(wire, "bystander", batch(100)) == 0
        shutil.rmtree(p.data_dir / "lost-0")  # the partition's directory vanishes under the broker
        assert produce(wire, "lost", batch(600)) == KAFKA_STORAGE_ERROR  # the roll cannot create a file
        # The log dir is offline now: every partition in it answers KAFKA_STORAGE_ERROR.
        assert produce(wire, "bystander", batch(100)) == KAFKA_STORAGE_ERROR
    (event,) = events(p, "log.storage_error")
    assert event["level"] == "error" and event["op"] == "open" and event["fatal"] is True
    assert event["path"] == str(p.data_dir / "lost-0" / "00000000000000000001.log")  # the roll at offset 1
    (offline,) = events(p, "log.dir_offline")
    assert offline["level"] == "error" and offline["log_dir"] == str(p.data_dir)
    p.stop()
    p.start()
    with WireClient(p.bootstrap) as wire:
        assert produce(wire, "bystander", batch(100)) == 0
