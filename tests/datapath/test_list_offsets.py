"""ListOffsets through real clients: earliest, latest, by timestamp (offsets_for_times) and max timestamp."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.support.brokers import ThreadBroker

from .clients import Rec, produce_confluent

TIMEOUT = 10
T0 = 1_750_000_000_000
N = 200
# Mostly rising timestamps with a few out of order, and the largest one twice (the first one counts).
TIMESTAMPS = [T0 + i * 1000 for i in range(N)]
TIMESTAMPS[57] = TIMESTAMPS[143] = T0 + 10_000_000
TIMESTAMPS[90] = T0 - 5000
TIMESTAMPS[120] = T0 + 30_500


def expected_offset(target: int, start: int = 0) -> int | None:
    """Kafka's answer: the first offset at or after the log start whose timestamp is >= target."""
    return next((o for o, ts in enumerate(TIMESTAMPS) if ts >= target and o >= start), None)


TARGETS = [
    T0 - 10_000,
    T0 - 5000,
    T0,
    T0 + 30_000,
    T0 + 30_001,
    T0 + 150_500,
    T0 + 9_999_999,
    T0 + 10_000_001,
]


@pytest.fixture
def stamped(broker: ThreadBroker) -> ThreadBroker:
    """Topic `stamped`: partition 0 holds N records with TIMESTAMPS in ten batches; partition 1 is empty."""
    broker.call(lambda: broker.broker.logs.create_topic("stamped", 2))  # type: ignore[union-attr]
    recs = [Rec(0, b"k%d" % i, b"v%d" % i, (), ts) for i, ts in enumerate(TIMESTAMPS)]
    produce_confluent(broker.bootstrap, "stamped", recs, flush_every=20)
    headers = broker.call(lambda: broker.broker.logs.get_log("stamped", 0).batch_headers())  # type: ignore[union-attr]
    assert len(headers) == N // 20
    return broker


def test_confluent_consumer_offsets_for_times(stamped: ThreadBroker) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": stamped.bootstrap, "group.id": "times"})
    try:
        for target in TARGETS:
            [tp] = consumer.offsets_for_times([TopicPartition("stamped", 0, target)], timeout=TIMEOUT)
            want = expected_offset(target)
            assert tp.offset == (-1 if want is None else want), target
        assert consumer.get_watermark_offsets(TopicPartition("stamped", 0), timeout=TIMEOUT) == (0, N)
        assert consumer.get_watermark_offsets(TopicPartition("stamped", 1), timeout=TIMEOUT) == (0, 0)
    finally:
        consumer.close()


def test_kafka_python_consumer_offsets_for_times(stamped: ThreadBroker) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=stamped.bootstrap)
    tp = TopicPartition("stamped", 0)
    try:
        for target in TARGETS:
            found = consumer.offsets_for_times({tp: target})[tp]
            want = expected_offset(target)
            if want is None:
                assert found is None
            else:
                assert (found.offset, found.timestamp) == (want, TIMESTAMPS[want])
        empty = TopicPartition("stamped", 1)
        assert consumer.beginning_offsets([tp, empty]) == {tp: 0, empty: 0}
        assert consumer.end_offsets([tp, empty]) == {tp: N, empty: 0}
    finally:
        consumer.close()


def test_aiokafka_consumer_offsets_for_times(stamped: ThreadBroker) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> dict[int, Any]:
        consumer = AIOKafkaConsumer(bootstrap_servers=stamped.bootstrap)
        await consumer.start()
        try:
            tp = TopicPartition("stamped", 0)
            return {t: (await consumer.offsets_for_times({tp: t}))[tp] for t in TARGETS}
        finally:
            await consumer.stop()

    for target, found in asyncio.run(run()).items():
        want = expected_offset(target)
        assert (found.offset if found else None) == want, target


def test_confluent_admin_list_offsets_every_spec(stamped: ThreadBroker) -> None:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": stamped.bootstrap})

    def list_one(partition: int, spec: Any) -> tuple[int, int]:
        tp = TopicPartition("stamped", partition)
        info = admin.list_offsets({tp: spec})[tp].result(TIMEOUT)
        return info.offset, info.timestamp

    assert list_one(0, OffsetSpec.earliest())[0] == 0
    assert list_one(0, OffsetSpec.latest())[0] == N
    assert list_one(0, OffsetSpec.max_timestamp()) == (57, T0 + 10_000_000)
    assert list_one(0, OffsetSpec.for_timestamp(T0 + 30_001)) == (31, T0 + 31_000)
    assert list_one(1, OffsetSpec.earliest())[0] == list_one(1, OffsetSpec.latest())[0] == 0
    assert list_one(1, OffsetSpec.max_timestamp())[0] == -1

    # After DeleteRecords the earliest offset and timestamp lookups start at the new log start.
    deleted = admin.delete_records([TopicPartition("stamped", 0, 100)])
    next(iter(deleted.values())).result(TIMEOUT)
    assert list_one(0, OffsetSpec.earliest())[0] == 100
    assert list_one(0, OffsetSpec.for_timestamp(T0)) == (100, TIMESTAMPS[100])


def test_kafka_python_admin_list_partition_offsets(stamped: ThreadBroker) -> None:
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient, OffsetSpec

    admin = KafkaAdminClient(bootstrap_servers=stamped.bootstrap)
    tp = TopicPartition("stamped", 0)
    try:
        got = {
            spec: admin.list_partition_offsets({tp: spec})[tp]
            for spec in (OffsetSpec.EARLIEST, OffsetSpec.LATEST, OffsetSpec.MAX_TIMESTAMP)
        }
        assert got[OffsetSpec.EARLIEST].offset == 0
        assert got[OffsetSpec.LATEST].offset == N
        assert (got[OffsetSpec.MAX_TIMESTAMP].offset, got[OffsetSpec.MAX_TIMESTAMP].timestamp) == (
            57,
            T0 + 10_000_000,
        )
        for target in (T0 + 30_001, T0 + 150_500):
            by_time = admin.list_partition_offsets({tp: target})[tp]
            want = expected_offset(target)
            assert want is not None and (by_time.offset, by_time.timestamp) == (want, TIMESTAMPS[want])
    finally:
        admin.close()


def test_log_append_time_topic_stamps_and_indexes_broker_time(broker: ThreadBroker) -> None:
    from kafka import KafkaConsumer, TopicPartition

    broker.call(
        lambda: broker.broker.logs.create_topic(  # type: ignore[union-attr]
            "appended", 1, configs={"message.timestamp.type": "LogAppendTime"}
        )
    )
    before = int(time.time() * 1000)
    produce_confluent(broker.bootstrap, "appended", [Rec(0, b"k", b"v%d" % i, (), T0) for i in range(10)])
    after = int(time.time() * 1000)

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tp = TopicPartition("appended", 0)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning()
        msgs: list[Any] = []
        for _ in range(40):
            msgs += consumer.poll(timeout_ms=250).get(tp, [])
            if len(msgs) >= 10:
                break
        assert len(msgs) == 10
        assert {m.timestamp_type for m in msgs} == {1}  # LogAppendTime
        stamps = {m.timestamp for m in msgs}
        assert len(stamps) == 1 and before <= stamps.pop() <= after
        assert consumer.offsets_for_times({tp: T0})[tp].offset == 0  # indexed by the append time
        assert consumer.offsets_for_times({tp: after + 1})[tp] is None
    finally:
        consumer.close()


@pytest.mark.parametrize("version", [8, 9, 10])
def test_earliest_local_and_latest_tiered_over_the_wire(stamped: ThreadBroker, version: int) -> None:
    """-4 (v8+) is the log start, as nothing is tiered; -5 (v9+) has no offset (Kafka answers -1 for a log
    without remote storage); v10 adds timeout_ms, which an answer here never needs."""
    from tests.support.wire import WireClient

    targets = [-4, -5] if version >= 9 else [-4]
    answers = {}
    with WireClient(stamped.bootstrap) as wire:
        for i, t in enumerate(targets):  # one request each: a partition asked twice is INVALID_REQUEST
            response = wire.request(
                2, version, replica_id=-1, isolation_level=0, timeout_ms=1000,
                topics=[{"name": "stamped", "partitions": [
                    {"partition_index": 0, "current_leader_epoch": -1, "timestamp": t}
                ]}],
            )  # fmt: skip
            [topic] = response.topics
            answers[i] = (topic.partitions[0].error_code, topic.partitions[0].offset)
    assert answers[0] == (0, 0)
    if version >= 9:
        assert answers[1] == (0, -1)
