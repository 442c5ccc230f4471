"""Old clients through the old message formats: kafka-python pinned to Kafka 0.9/0.10/0.11 produces and
consumes; a modern client reads those records back byte-identical (no headers); an old consumer reads a
modern producer's records; librdkafka without ApiVersions (broker.version.fallback) round-trips."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, Consumer, Producer

from tests.support.brokers import ThreadBroker

RECORDS = [
    (b"k0", b"v0"),
    (None, b"no key"),
    (b"k2", None),
    (b"\x00\xffbinary", bytes(range(256))),
    (b"big", b"x" * 200_000),
]
# api_version -> (Produce, Fetch) versions kafka-python sends: message format v0 below 0.10, v1 up to
# 0.11 (where v2 batches begin).
OLD = [(0, 9), (0, 10, 0), (0, 10, 1), (0, 11, 0)]
CODECS = [None, "gzip", "snappy", "lz4"]
# kafka-python writes Kafka 0.8's LZ4 framing (message format v0) only with the xxhash package.
PAIRS = [(api, codec) for api in OLD for codec in CODECS if not (api < (0, 10) and codec == "lz4")]


def _old_produce(bootstrap: str, topic: str, api: tuple[int, ...], codec: str | None) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, api_version=api, compression_type=codec, linger_ms=50
    )
    try:
        futures = [producer.send(topic, key=k, value=v) for k, v in RECORDS]
        producer.flush(timeout=20)
        for f in futures:
            f.get(timeout=10)
    finally:
        producer.close()


def _old_consume(bootstrap: str, topic: str, api: tuple[int, ...]) -> list[Any]:
    from kafka import KafkaConsumer, TopicPartition

    # Assigned, not subscribed: kafka-python 3.0 sometimes subscribes after its bootstrap Metadata
    # (topics=[]) and then waits 5 minutes for its next refresh, so it would see no partition at all.
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        api_version=api,
        auto_offset_reset="earliest",
        consumer_timeout_ms=30000,  # only a failing run waits it out: the loop stops at the last record
        group_id=None,
        enable_auto_commit=False,
    )
    consumer.assign([TopicPartition(topic, 0)])
    try:
        got: list[Any] = []
        for message in consumer:
            got.append(message)
            if len(got) == len(RECORDS):
                break
        return got
    finally:
        consumer.close()


def _modern_consume(bootstrap: str, topic: str) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list[Any] = []
    try:
        for _ in range(60):
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append(message)
            if len(got) == len(RECORDS):
                break
        return got
    finally:
        consumer.close()


@pytest.mark.parametrize(("api", "codec"), PAIRS, ids=[f"{'.'.join(map(str, a))}-{c}" for a, c in PAIRS])
def test_old_kafka_python_produces_and_consumes(
    broker: ThreadBroker, api: tuple[int, ...], codec: str | None
) -> None:
    topic = f"old-{'-'.join(map(str, api))}-{codec}"
    _old_produce(broker.bootstrap, topic, api, codec)
    got = _old_consume(broker.bootstrap, topic, api)
    assert [(m.key, m.value) for m in got] == RECORDS
    assert [m.offset for m in got] == list(range(len(RECORDS)))
    if api < (0, 10):
        assert all(m.timestamp in (None, -1) for m in got)  # message format v0: no timestamps
    else:
        assert all(m.timestamp > 0 for m in got)
    modern = _modern_consume(broker.bootstrap, topic)
    assert [(m.key(), m.value()) for m in modern] == RECORDS
    assert all(not m.headers() for m in modern)


@pytest.mark.parametrize("api", OLD, ids=lambda a: ".".join(map(str, a)))
def test_an_old_consumer_reads_a_modern_producers_records(broker: ThreadBroker, api: tuple[int, ...]) -> None:
    topic = f"modern-to-{'-'.join(map(str, api))}"
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "gzip", "linger.ms": 20})
    for k, v in RECORDS:
        producer.produce(topic, key=k, value=v, headers=[("h", b"dropped for old formats")])
    assert producer.flush(10) == 0
    got = _old_consume(broker.bootstrap, topic, api)
    assert [(m.key, m.value) for m in got] == RECORDS
    assert [m.offset for m in got] == list(range(len(RECORDS)))


def test_librdkafka_without_api_versions_round_trips(broker: ThreadBroker) -> None:
    """librdkafka with api.version.request=false and broker.version.fallback=0.9.0 uses Produce v1,
    Fetch v1 and ListOffsets v0, with message format v0."""
    topic = "rdkafka-fallback"
    old = {
        "api.version.request": False,
        "broker.version.fallback": "0.9.0",
        "bootstrap.servers": broker.bootstrap,
    }
    producer = Producer({**old, "linger.ms": 20})
    for k, v in RECORDS:
        producer.produce(topic, key=k, value=v)
    assert producer.flush(10) == 0
    consumer = Consumer({**old, "group.id": f"g-{uuid.uuid4().hex}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[Any] = []
    try:
        for _ in range(60):
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            assert message.timestamp()[0] == TIMESTAMP_NOT_AVAILABLE  # message format v0 was read
            got.append((message.key(), message.value()))
            if len(got) == len(RECORDS):
                break
    finally:
        consumer.close()
    assert got == RECORDS
