"""Sending a list of records with each Python client library, and failing loudly if one is not
acknowledged. The caller builds the producer with the settings its test is about."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S


def _send_kwargs(r: Rec) -> dict[str, Any]:
    """kafka-python's and aiokafka's `send()` take the same keyword arguments."""
    return dict(
        key=r.key, value=r.value, headers=list(r.headers), partition=r.partition, timestamp_ms=r.timestamp
    )


def send_kafka_python(producer: Any, topic: str, recs: Sequence[Rec], timeout: float = DEADLINE_S) -> None:
    """Send through a `kafka.KafkaProducer` and wait for every acknowledgement."""
    futures = [producer.send(topic, **_send_kwargs(r)) for r in recs]
    producer.flush(timeout=timeout)
    for f in futures:
        f.get(timeout=timeout)


def send_confluent(
    producer: Any, topic: str, recs: Sequence[Rec], timeout: float = DEADLINE_S, *, flush_every: int = 0
) -> None:
    """Send through a `confluent_kafka.Producer`; `flush_every` > 0 flushes after every so many records,
    which makes batches of at most that size. A timestamp of None lets librdkafka stamp the record."""
    errors: list[str] = []

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    for i, r in enumerate(recs):
        if flush_every and i and i % flush_every == 0:
            producer.flush(timeout)
        producer.produce(
            topic,
            key=r.key,
            value=r.value,
            headers=list(r.headers),
            partition=r.partition,
            timestamp=r.timestamp or 0,
            on_delivery=delivered,
        )
        producer.poll(0)
    remaining = producer.flush(timeout)
    assert remaining == 0 and not errors, f"{remaining} undelivered, errors {errors[:5]}"


async def send_aiokafka(producer: Any, topic: str, recs: Sequence[Rec], timeout: float = DEADLINE_S) -> None:
    """Send through a started `aiokafka.AIOKafkaProducer` and wait for every acknowledgement."""
    futures = [await producer.send(topic, **_send_kwargs(r)) for r in recs]
    await asyncio.wait_for(asyncio.gather(*futures), timeout)
