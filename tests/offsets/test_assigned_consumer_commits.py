"""confluent-kafka consumers that assign() their partitions and commit to a group they never join, with
either group protocol: librdkafka's KIP-848 consumer commits with the member id it gave itself and
generation -1, which Kafka takes when the group is empty or unknown."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.produce import send_confluent
from tests.support.records import Rec


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_an_assigned_consumer_commits_and_a_fresh_consumer_reads_and_resumes_from_it(
    broker: ThreadBroker, protocol: str
) -> None:
    topic, group = f"assigned-{protocol}", f"assigned-group-{protocol}"
    create_topic(broker.bootstrap, topic, 1)
    send_confluent(
        Producer({"bootstrap.servers": broker.bootstrap}),
        topic,
        [Rec(partition=0, key=None, value=b"%d" % i) for i in range(8)],
    )
    config = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": group,
        "group.protocol": protocol,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    assigned = Consumer(config)
    try:
        assigned.assign([TopicPartition(topic, 0, 0)])
        [committed] = assigned.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
        assert committed.error is None
    finally:
        assigned.close()

    fresh = Consumer(config)
    try:
        [read] = fresh.committed([TopicPartition(topic, 0)], timeout=10)
        assert (read.error, read.offset) == (None, 5)
        # Subscribing to the group that only stored offsets starts from them.
        fresh.subscribe([topic])
        got: list[int] = []
        while len(got) < 3:
            message = fresh.poll(10)
            assert message is not None, f"consumed only {got}"
            assert message.error() is None
            got.append(message.offset())
        assert got == [5, 6, 7]
    finally:
        fresh.close()
