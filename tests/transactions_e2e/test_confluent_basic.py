"""confluent-kafka's transactional producer commits and aborts against a real
broker, and a read_committed consumer reads back exactly the committed records (a
read_uncommitted one reads them all)."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.brokers import ThreadBroker

DEADLINE_S = 60.0  # a bound on waiting for the client, not a performance threshold


def _create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=DEADLINE_S)


def _producer(bootstrap: str, transactional_id: str) -> Producer:
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": 60_000,
            "linger.ms": 5,
        }
    )


def _read_all(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[str]:
    """Every record of the topic, read from the start up to the end each partition reports."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{isolation}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    out: list[str] = []
    at_end: set[int] = set()
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        deadline = time.monotonic() + DEADLINE_S
        while len(at_end) < partitions and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=100, timeout=0.2):
                error = m.error()
                if error is None:
                    value = m.value()
                    assert value is not None
                    out.append(value.decode())
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(int(m.partition() or 0))
                else:
                    raise AssertionError(f"consumer error: {error}")
    finally:
        consumer.close()
    assert len(at_end) == partitions, "the consumer never reached the end of every partition"
    return out


def _send(producer: Producer, topic: str, values: list[str], partitions: int) -> None:
    for i, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=i % partitions)
    producer.flush(DEADLINE_S)


def test_commit_and_abort_read_back_committed_only(broker: ThreadBroker) -> None:
    topic, partitions = "txn-basic", 2
    _create(broker.bootstrap, topic, partitions)
    producer = _producer(broker.bootstrap, "txn-basic-producer")
    producer.init_transactions(DEADLINE_S)

    producer.begin_transaction()
    _send(producer, topic, ["c1", "c2", "c3"], partitions)
    producer.commit_transaction(DEADLINE_S)

    producer.begin_transaction()
    _send(producer, topic, ["a1", "a2"], partitions)
    producer.abort_transaction(DEADLINE_S)

    producer.begin_transaction()
    _send(producer, topic, ["c4"], partitions)
    producer.commit_transaction(DEADLINE_S)

    committed = _read_all(broker.bootstrap, topic, partitions, "read_committed")
    assert sorted(committed) == ["c1", "c2", "c3", "c4"]
    everything = _read_all(broker.bootstrap, topic, partitions, "read_uncommitted")
    assert sorted(everything) == ["a1", "a2", "c1", "c2", "c3", "c4"]


def test_a_second_init_fences_the_first_producer(broker: ThreadBroker) -> None:
    topic = "txn-fence"
    _create(broker.bootstrap, topic, 1)
    first = _producer(broker.bootstrap, "txn-fence-producer")
    first.init_transactions(DEADLINE_S)
    first.begin_transaction()
    _send(first, topic, ["zombie"], 1)

    second = _producer(broker.bootstrap, "txn-fence-producer")
    second.init_transactions(DEADLINE_S)  # aborts the first one's open transaction
    second.begin_transaction()
    _send(second, topic, ["live"], 1)
    second.commit_transaction(DEADLINE_S)

    error: Any = None
    try:
        first.commit_transaction(DEADLINE_S)
    except Exception as exc:  # KafkaException carrying the fatal fencing error
        error = exc.args[0]
    assert error is not None and error.fatal()
    assert _read_all(broker.bootstrap, topic, 1, "read_committed") == ["live"]


def test_offsets_sent_to_a_transaction_are_committed_with_it(broker: ThreadBroker) -> None:
    topic, group = "txn-offsets", "txn-offsets-group"
    _create(broker.bootstrap, topic, 1)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        metadata = consumer.consumer_group_metadata()
        producer = _producer(broker.bootstrap, "txn-offsets-producer")
        producer.init_transactions(DEADLINE_S)

        producer.begin_transaction()
        _send(producer, topic, ["out"], 1)
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 5)], metadata, DEADLINE_S)
        producer.abort_transaction(DEADLINE_S)
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=DEADLINE_S)
        assert committed[0].offset < 0  # aborted: no offset

        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], metadata, DEADLINE_S)
        producer.commit_transaction(DEADLINE_S)
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=DEADLINE_S)
        assert committed[0].offset == 7
    finally:
        consumer.close()
