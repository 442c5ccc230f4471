"""Real clients bootstrap against kafkito and see an auto-created topic with its partitions."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Callable

import pytest

from tests.support.brokers import ThreadBroker

PARTITIONS = 4


@pytest.fixture
def four_partition_broker(broker_factory: Callable[..., ThreadBroker]) -> ThreadBroker:
    return broker_factory(num_partitions=PARTITIONS)


def test_kafka_python_sees_auto_created_topic(four_partition_broker: ThreadBroker) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=four_partition_broker.bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=four_partition_broker.bootstrap)
    try:
        assert producer.partitions_for("kp-auto") == set(range(PARTITIONS))
        assert "kp-auto" in consumer.topics()
        assert consumer.partitions_for_topic("kp-auto") == set(range(PARTITIONS))
    finally:
        producer.close()
        consumer.close()


def test_kafka_python_admin_lists_topics_and_cluster(four_partition_broker: ThreadBroker) -> None:
    from kafka import KafkaAdminClient, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=four_partition_broker.bootstrap)
    producer.partitions_for("kp-admin")
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=four_partition_broker.bootstrap)
    try:
        assert "kp-admin" in admin.list_topics()
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == four_partition_broker.broker.cluster_id  # type: ignore[union-attr]
    finally:
        admin.close()


def test_confluent_admin_list_topics(four_partition_broker: ThreadBroker) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": four_partition_broker.bootstrap})
    md = admin.list_topics(topic="ck-auto", timeout=10)
    assert md.cluster_id == four_partition_broker.broker.cluster_id  # type: ignore[union-attr]
    assert set(md.topics["ck-auto"].partitions) == set(range(PARTITIONS))
    assert md.topics["ck-auto"].error is None
    assert [b.port for b in md.brokers.values()] == [four_partition_broker.port]


def test_aiokafka_client_bootstrap(four_partition_broker: ThreadBroker) -> None:
    from aiokafka import AIOKafkaConsumer

    async def run() -> set[int] | None:
        consumer = AIOKafkaConsumer(bootstrap_servers=four_partition_broker.bootstrap)
        await consumer.start()
        try:
            await consumer._client.force_metadata_update()
            await consumer._client._wait_on_metadata("aio-auto")
            return consumer.partitions_for_topic("aio-auto")
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == set(range(PARTITIONS))


def test_kcat_lists_metadata(four_partition_broker: ThreadBroker) -> None:
    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by `make install-clients`"
    out = subprocess.run(
        [kcat, "-b", four_partition_broker.bootstrap, "-L", "-J", "-t", "kcat-auto"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    md = json.loads(out.stdout)
    topic = next(t for t in md["topics"] if t["topic"] == "kcat-auto")
    assert len(topic["partitions"]) == PARTITIONS
    assert md["brokers"][0]["name"].endswith(f":{four_partition_broker.port}")
