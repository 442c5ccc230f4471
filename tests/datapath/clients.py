"""Producing and consuming a known record set with kafka-python, confluent-kafka and aiokafka."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from tests.support.produce import send_aiokafka, send_confluent, send_kafka_python
from tests.support.records import Header, Rec, plain_headers
from tests.support.waiting import DEADLINE_S

__all__ = ["CONSUMERS", "DEADLINE_S", "PRODUCERS", "Rec", "counts", "layout", "sample_records"]

Layout = dict[int, list[Rec]]  # partition -> records in offset order

_WORDS = [b"kafka ", b"kafkito ", b"\x00\x01", b"record ", b"\xff" * 3]


def sample_records(n: int, partitions: int, *, seed: int = 5) -> list[Rec]:
    """`n` records spread round-robin over `partitions`: binary keys and values of mixed sizes (null and
    empty ones included), 0-3 headers (repeated keys, empty values), out-of-order timestamps."""
    rng = random.Random(seed)
    base = int(time.time() * 1000) - 3_600_000
    out = []
    for i in range(n):
        key: bytes | None = b"key-%d-" % i + rng.randbytes(rng.randrange(0, 8))
        if i % 17 == 0:
            key = None
        elif i % 19 == 0:
            key = b""
        size = rng.choice((0, 1, 10, 100, 1000, 3000))
        # Binary noise plus repetitive text, so that every codec really compresses (librdkafka sends a
        # batch uncompressed when compressing does not make it smaller).
        value: bytes | None = rng.randbytes(size // 10) + b"".join(rng.choices(_WORDS, k=size // 6))
        if i % 23 == 0 and key is not None:  # kafka-python refuses a record with neither
            value = None
        headers: list[Header] = [(f"h{j % 2}", rng.randbytes(rng.randrange(0, 12))) for j in range(i % 4)]
        timestamp = base + i * 10 + rng.randrange(-50, 50)
        out.append(Rec(i % partitions, key, value, tuple(headers), timestamp))
    return out


def layout(recs: Sequence[Rec]) -> Layout:
    by_partition: Layout = {}
    for r in recs:
        by_partition.setdefault(r.partition, []).append(r)
    return by_partition


# -- producers -------------------------------------------------------------------------------------


def produce_kafka_python(
    bootstrap: str, topic: str, recs: Sequence[Rec], compression: str | None = None
) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, compression_type=compression, linger_ms=5, acks="all"
    )  # idempotent by default in kafka-python 3
    try:
        send_kafka_python(producer, topic, recs)
    finally:
        producer.close()


def produce_confluent(
    bootstrap: str,
    topic: str,
    recs: Sequence[Rec],
    compression: str = "none",
    *,
    flush_every: int = 0,
    **extra: Any,
) -> None:
    """Produce `recs` (idempotent, batching on); `flush_every` > 0 flushes after every so many records,
    which makes batches of at most that size. Extra librdkafka settings (dots as given) override."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": compression,
            "enable.idempotence": True,
            "linger.ms": 5,
            **extra,
        }
    )
    send_confluent(producer, topic, recs, flush_every=flush_every)


def produce_aiokafka(bootstrap: str, topic: str, recs: Sequence[Rec], compression: str | None = None) -> None:
    from aiokafka import AIOKafkaProducer

    async def run() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, compression_type=compression, enable_idempotence=True, linger_ms=5
        )
        await producer.start()
        try:
            await send_aiokafka(producer, topic, recs)
        finally:
            await producer.stop()

    asyncio.run(run())


# -- consumers -------------------------------------------------------------------------------------


def consume_kafka_python(bootstrap: str, topic: str, expected: dict[int, int]) -> Layout:
    """Read `expected[p]` records of each partition p from its beginning."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    got: Layout = {p: [] for p in expected}
    try:
        consumer.assign([TopicPartition(topic, p) for p in expected])
        consumer.seek_to_beginning()
        deadline = time.monotonic() + DEADLINE_S
        while _missing(got, expected) and time.monotonic() < deadline:
            for tp, msgs in consumer.poll(timeout_ms=500).items():
                for m in msgs:
                    assert m.offset == len(got[tp.partition]), "offsets must be dense from 0"
                    got[tp.partition].append(
                        Rec(tp.partition, m.key, m.value, plain_headers(m.headers), m.timestamp)
                    )
    finally:
        consumer.close()
    return got


def consume_confluent(bootstrap: str, topic: str, expected: dict[int, int], **extra: Any) -> Layout:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "datapath", "enable.auto.commit": False, **extra}
    )
    got: Layout = {p: [] for p in expected}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in expected])
        deadline = time.monotonic() + DEADLINE_S
        while _missing(got, expected) and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=500, timeout=0.5):
                assert m.error() is None, m.error()
                p = m.partition()
                assert m.offset() == len(got[p]), "offsets must be dense from 0"
                got[p].append(Rec(p, m.key(), m.value(), plain_headers(m.headers()), m.timestamp()[1]))
    finally:
        consumer.close()
    return got


def consume_aiokafka(bootstrap: str, topic: str, expected: dict[int, int]) -> Layout:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> Layout:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        got: Layout = {p: [] for p in expected}
        try:
            consumer.assign([TopicPartition(topic, p) for p in expected])
            await consumer.seek_to_beginning()
            deadline = time.monotonic() + DEADLINE_S
            while _missing(got, expected) and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                for tp, msgs in batches.items():
                    for m in msgs:
                        assert m.offset == len(got[tp.partition]), "offsets must be dense from 0"
                        got[tp.partition].append(
                            Rec(tp.partition, m.key, m.value, plain_headers(m.headers), m.timestamp)
                        )
        finally:
            await consumer.stop()
        return got

    return asyncio.run(run())


def _missing(got: Layout, expected: dict[int, int]) -> bool:
    return any(len(got[p]) < n for p, n in expected.items())


Producer = Callable[..., None]
Consumer = Callable[[str, str, dict[int, int]], Layout]

PRODUCERS: dict[str, Producer] = {
    "kafka-python": produce_kafka_python,
    "confluent-kafka": produce_confluent,
    "aiokafka": produce_aiokafka,
}
CONSUMERS: dict[str, Consumer] = {
    "kafka-python": consume_kafka_python,
    "confluent-kafka": consume_confluent,
    "aiokafka": consume_aiokafka,
}


def counts(recs: Sequence[Rec]) -> dict[int, int]:
    return {p: len(rs) for p, rs in layout(recs).items()}
