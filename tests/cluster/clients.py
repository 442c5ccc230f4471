"""Producing and consuming through a cluster with kafka-python and confluent-kafka, as a user would:
send and wait for every acknowledgement, read until every expected value arrived."""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import Consumer, KafkaException, Producer
from kafka import KafkaConsumer, KafkaProducer

from tests.support.waiting import DEADLINE_S, wait_until


def kafka_python_send(producer: KafkaProducer, topic: str, values: Iterable[bytes]) -> None:
    futures = [producer.send(topic, value) for value in values]
    producer.flush(DEADLINE_S)
    for future in futures:
        future.get(DEADLINE_S)  # raises if the record was not acknowledged


def confluent_send(producer: Producer, topic: str, values: Iterable[bytes]) -> None:
    failed: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            failed.append(str(err))

    for value in values:
        producer.produce(topic, value, on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(DEADLINE_S) == 0, "records still unacknowledged"
    assert not failed, failed


def kafka_python_read(consumer: KafkaConsumer, got: list[bytes], expected: set[bytes]) -> None:
    def more() -> bool:
        for batch in consumer.poll(200).values():
            got.extend(m.value for m in batch)
        return expected <= set(got)

    wait_until(more, what=f"{len(expected - set(got))} records still missing")


def confluent_read(consumer: Consumer, got: list[bytes], expected: set[bytes]) -> None:
    def more() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None:
            if msg.error() is None:
                got.append(msg.value())
            elif msg.error().fatal():
                raise KafkaException(msg.error())
        return expected <= set(got)

    wait_until(more, what=f"{len(expected - set(got))} records still missing")


def values(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(count)]
