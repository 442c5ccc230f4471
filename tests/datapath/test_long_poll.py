"""A consumer whose fetch is parked in the purgatory gets a new record long before fetch.wait.max.ms."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until

MAX_WAIT_MS = 5000
TOPIC = "long-poll"
DEADLINE_S = 30.0


class ParkedProducer:
    """Produces one record from a thread as soon as a fetch is waiting in the broker's purgatory."""

    def __init__(self, broker: ThreadBroker) -> None:
        from confluent_kafka import Producer

        self._broker = broker
        self._producer: Any = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        self._producer.list_topics(TOPIC, timeout=10)  # metadata ready: the send itself is quick
        self.sent_at: float | None = None
        self.parked_before_send = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ParkedProducer:
        self._thread.start()
        return self

    def _pending(self) -> int:
        return self._broker.call(lambda: self._broker.broker.fetch_purgatory.pending)  # type: ignore[union-attr]

    def _run(self) -> None:
        with contextlib.suppress(AssertionError):  # never parked: send anyway, the test then says so
            wait_until(self._pending, DEADLINE_S, "a fetch parked in the purgatory", poll=0.01)
        self.parked_before_send = self._pending()
        # Elapsed time on purpose, not a wait for an event: the parked fetch ages a little, so that an
        # answer by its timeout would come ~5 s after the send, far from an answer by the append.
        time.sleep(0.2)
        self.sent_at = time.monotonic()
        self._producer.produce(TOPIC, value=b"wake up", partition=0)
        self._producer.flush(10)

    def join(self) -> None:
        """Wait for the send, then drop the producer (librdkafka keeps reconnecting to a stopped broker)."""
        self._thread.join(DEADLINE_S)
        self._producer = None


def _consume_confluent(broker: ThreadBroker) -> tuple[bytes, float]:
    from confluent_kafka import OFFSET_END, Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "long-poll",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": MAX_WAIT_MS,
            "fetch.min.bytes": 1,
        }
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, OFFSET_END)])
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            m = consumer.poll(0.05)
            if m is not None and m.error() is None:
                return m.value(), time.monotonic()
        raise AssertionError("no record")
    finally:
        consumer.close()


def _consume_kafka_python(broker: ThreadBroker) -> tuple[bytes, float]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, fetch_max_wait_ms=MAX_WAIT_MS, enable_auto_commit=False
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0)])
        consumer.seek_to_end()
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            for msgs in consumer.poll(timeout_ms=100).values():
                return msgs[0].value, time.monotonic()
        raise AssertionError("no record")
    finally:
        consumer.close()


def _consume_aiokafka(broker: ThreadBroker) -> tuple[bytes, float]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> tuple[bytes, float]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap, fetch_max_wait_ms=MAX_WAIT_MS, enable_auto_commit=False
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(TOPIC, 0)])
            await consumer.seek_to_end()
            m = await asyncio.wait_for(consumer.getone(), DEADLINE_S)
            return m.value, time.monotonic()
        finally:
            await consumer.stop()

    return asyncio.run(run())


CONSUMERS: dict[str, Callable[[ThreadBroker], tuple[bytes, float]]] = {
    "confluent-kafka": _consume_confluent,
    "kafka-python": _consume_kafka_python,
    "aiokafka": _consume_aiokafka,
}


@pytest.mark.parametrize("client", list(CONSUMERS))
def test_parked_fetch_is_completed_by_the_append(broker: ThreadBroker, client: str) -> None:
    broker.call(lambda: broker.broker.logs.create_topic(TOPIC, 1))  # type: ignore[union-attr]
    producer = ParkedProducer(broker).start()
    value, received_at = CONSUMERS[client](broker)
    producer.join()
    assert value == b"wake up"
    assert producer.parked_before_send >= 1, "the consumer's fetch was waiting in the purgatory"
    assert producer.sent_at is not None
    latency = received_at - producer.sent_at
    # Answered by the append, not by the timeout: well under the fetch's own max wait.
    assert latency < MAX_WAIT_MS / 1000 / 2, f"record arrived {latency:.3f}s after the send"
