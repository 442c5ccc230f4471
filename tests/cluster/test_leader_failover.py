"""A producer and a consumer keep going while their partition leader's node stops and starts: with
kafka-python and confluent-kafka, every acknowledged record is read, and none is lost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

import kafkito.testing
from kafkito.testing import KafkitoHandle
from tests.cluster.clients import confluent_read, confluent_send, kafka_python_read, kafka_python_send, values


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[KafkitoHandle]:
    with kafkito.testing.start(nodes=3, data_dir=tmp_path, log_level="warning") as handle:
        yield handle


@pytest.mark.parametrize("replication", [2, 1], ids=["leader-moves", "partition-offline"])
def test_kafka_python_producer_and_consumer_ride_through_the_leaders_node_stopping(
    cluster: KafkitoHandle, replication: int
) -> None:
    cluster.create_topic("payments", partitions=1, replication_factor=replication)
    cluster.move_leader("payments", 0, 2)
    cluster.move_coordinator("auditors", 1)  # the group's coordinator stays up
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retries=100, retry_backoff_ms=50)
    consumer = KafkaConsumer(
        "payments", bootstrap_servers=cluster.bootstrap_servers, group_id="auditors",
        auto_offset_reset="earliest", reconnect_backoff_max_ms=200,
    )  # fmt: skip
    got: list[bytes] = []
    try:
        kafka_python_send(producer, "payments", values("before", 20))
        kafka_python_read(consumer, got, set(values("before", 20)))

        cluster.stop_node(2)
        if replication == 1:
            assert cluster.leader("payments", 0) == -1  # its one replica is down: offline
            pending = [producer.send("payments", v) for v in values("down", 20)]  # retried until back
            cluster.start_node(2)
            producer.flush(60)
            for future in pending:
                future.get(60)
        else:
            assert cluster.leader("payments", 0) in (1, 3)  # the other replica took over
            kafka_python_send(producer, "payments", values("down", 20))
            cluster.start_node(2)
        assert cluster.leader("payments", 0) == 2
        kafka_python_send(producer, "payments", values("after", 20))
        everything = set(values("before", 20) + values("down", 20) + values("after", 20))
        kafka_python_read(consumer, got, everything)
    finally:
        producer.close()
        consumer.close()
    assert set(got) == everything


def test_confluent_producer_and_consumer_ride_through_the_leaders_node_stopping(
    cluster: KafkitoHandle,
) -> None:
    cluster.create_topic("orders", partitions=2, replication_factor=2)
    cluster.move_leader("orders", 0, 3)
    cluster.move_leader("orders", 1, 3)
    cluster.move_coordinator("shippers", 1)
    servers = cluster.bootstrap_servers
    producer = Producer({"bootstrap.servers": servers, "enable.idempotence": True, "linger.ms": 5})
    consumer = Consumer({
        "bootstrap.servers": servers, "group.id": "shippers", "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 500,
    })  # fmt: skip
    consumer.subscribe(["orders"])
    got: list[bytes] = []
    try:
        confluent_send(producer, "orders", values("before", 30))
        confluent_read(consumer, got, set(values("before", 30)))

        cluster.stop_node(3)
        assert {cluster.leader("orders", 0), cluster.leader("orders", 1)} <= {1, 2}
        confluent_send(producer, "orders", values("down", 30))
        confluent_read(consumer, got, set(values("down", 30)))

        cluster.start_node(3)
        assert (cluster.leader("orders", 0), cluster.leader("orders", 1)) == (3, 3)
        confluent_send(producer, "orders", values("after", 30))
        everything = set(values("before", 30) + values("down", 30) + values("after", 30))
        confluent_read(consumer, got, everything)
    finally:
        consumer.close()
    assert set(got) == everything
    assert len(got) == len(everything)  # the idempotent producer wrote each record once
