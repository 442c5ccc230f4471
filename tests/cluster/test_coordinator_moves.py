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


def test_a_transaction_commits_through_a_coordinator_on_another_node_than_the_leaders(
    cluster: KafkitoHandle,
) -> None:
    cluster.create_topic("ledger", partitions=2, replication_factor=2)
    cluster.move_leader("ledger", 0, 1)
    cluster.move_leader("ledger", 1, 2)
    cluster.move_coordinator("bank-1", 3, transaction=True)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "bank-1"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(20):
        producer.produce("ledger", b"entry-%d" % i, partition=i % 2)
    producer.commit_transaction(30)
    assert cluster.coordinator("bank-1", transaction=True) == 3

    consumer = Consumer({
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": "auditors",
        "auto.offset.reset": "earliest", "isolation.level": "read_committed",
    })  # fmt: skip
    consumer.subscribe(["ledger"])
    got: list[bytes] = []
    try:
        confluent_read(consumer, got, {b"entry-%d" % i for i in range(20)})
    finally:
        consumer.close()


def test_a_kip848_consumer_survives_its_coordinator_moving(cluster: KafkitoHandle) -> None:
    cluster.create_topic("signals", partitions=3, replication_factor=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    consumer = Consumer({
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": "watchers", "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
    })  # fmt: skip
    consumer.subscribe(["signals"])
    got: list[bytes] = []
    try:
        confluent_send(producer, "signals", values("first", 20))
        confluent_read(consumer, got, set(values("first", 20)))
        epoch = cluster.wait_for_group("watchers", members=1)["generation"]

        cluster.move_coordinator("watchers", _elsewhere(cluster, "watchers"))
        confluent_send(producer, "signals", values("second", 20))
        confluent_read(consumer, got, set(values("first", 20) + values("second", 20)))
        described = cluster.wait_for_group("watchers", members=1)
    finally:
        consumer.close()
    assert described["generation"] == epoch  # the member kept its epoch: no new assignment
