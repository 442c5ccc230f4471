"""A consumer survives its group coordinator moving to another node (and the coordinator's node
stopping): kafka-python and confluent-kafka find the new coordinator on NOT_COORDINATOR, keep their
membership, keep consuming and commit through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

import kafkito.testing
from kafkito.testing import KafkitoHandle
from tests.cluster.clients import confluent_read, confluent_send, kafka_python_read, kafka_python_send, values
from tests.support.waiting import wait_until


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[KafkitoHandle]:
    with kafkito.testing.start(nodes=3, data_dir=tmp_path, log_level="warning") as handle:
        yield handle


def _elsewhere(cluster: KafkitoHandle, group: str) -> int:
    return next(n.node_id for n in cluster.nodes if n.node_id != cluster.coordinator(group))


def test_a_kafka_python_consumer_survives_its_coordinator_moving(cluster: KafkitoHandle) -> None:
    cluster.create_topic("events", partitions=2, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    consumer = KafkaConsumer(
        "events", bootstrap_servers=cluster.bootstrap_servers, group_id="readers",
        auto_offset_reset="earliest", enable_auto_commit=False, heartbeat_interval_ms=200,
    )  # fmt: skip
    got: list[bytes] = []
    try:
        kafka_python_send(producer, "events", values("first", 20))
        kafka_python_read(consumer, got, set(values("first", 20)))
        consumer.commit()
        generation = cluster.wait_for_group("readers", members=1)["generation"]

        target = _elsewhere(cluster, "readers")
        cluster.move_coordinator("readers", target)
        kafka_python_send(producer, "events", values("second", 20))
        kafka_python_read(consumer, got, set(values("first", 20) + values("second", 20)))
        consumer.commit()  # through the new coordinator

        cluster.stop_node(target)  # and once more: the coordinator's node goes away
        assert cluster.coordinator("readers") not in (target, -1)
        kafka_python_send(producer, "events", values("third", 20))
        kafka_python_read(
            consumer, got, set(values("first", 20) + values("second", 20) + values("third", 20))
        )
        consumer.commit()
        committed = {p: consumer.committed(KafkaTopicPartition("events", p)) for p in (0, 1)}
        described = cluster.wait_for_group("readers", members=1)
    finally:
        producer.close()
        consumer.close()
    assert sum(o or 0 for o in committed.values()) == 60
    assert described["generation"] == generation  # the member kept its membership: no rebalance


def test_a_confluent_consumer_survives_its_coordinator_moving(cluster: KafkitoHandle) -> None:
    cluster.create_topic("clicks", partitions=2, replication_factor=3)
    servers = cluster.bootstrap_servers
    producer = Producer({"bootstrap.servers": servers})
    consumer = Consumer({
        "bootstrap.servers": servers, "group.id": "counters", "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })  # fmt: skip
    consumer.subscribe(["clicks"])
    got: list[bytes] = []
    try:
        confluent_send(producer, "clicks", values("first", 20))
        confluent_read(consumer, got, set(values("first", 20)))
        consumer.commit(asynchronous=False)
        generation = cluster.wait_for_group("counters", members=1)["generation"]

        cluster.move_coordinator("counters", _elsewhere(cluster, "counters"))
        confluent_send(producer, "clicks", values("second", 20))
        confluent_read(consumer, got, set(values("first", 20) + values("second", 20)))

        def committed_all() -> bool:
            try:
                consumer.commit(asynchronous=False)
            except Exception:  # NOT_COORDINATOR while it looks the new one up: commit again
                return False
            offsets = consumer.committed([TopicPartition("clicks", p) for p in (0, 1)], timeout=10)
            return sum(max(tp.offset, 0) for tp in offsets) == 40

        wait_until(committed_all, what="the commit through the new coordinator")
        described = cluster.wait_for_group("counters", members=1)
    finally:
        consumer.close()
    assert described["generation"] == generation  # the member kept its membership: no rebalance
