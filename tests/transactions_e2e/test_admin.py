"""Admin tools see transactions, as kafka-transactions.sh does (kafka-python's KafkaAdminClient):
ListTransactions and DescribeTransactions at the coordinator, DescribeProducers at the partition,
while a transaction is open and after it commits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.bounded import bounded
from tests.transactions_e2e.logview import plain_produce
from tests.transactions_e2e.producers import make_producer, txn_id

PARTITIONS = 2
TIMEOUT_MS = 45_000


@pytest.fixture
def admin(broker: ThreadBroker) -> Iterator[Any]:
    from kafka import KafkaAdminClient

    client = bounded(lambda: KafkaAdminClient(bootstrap_servers=broker.bootstrap), "an admin client")
    yield client
    bounded(client.close, "closing the admin client")


def listing(admin: Any, **filters: Any) -> list[Any]:
    """ListTransactions on every broker (one here), the answers concatenated."""
    by_broker = bounded(lambda: admin.list_transactions(**filters), "list_transactions")
    assert len(by_broker) == 1, f"answers from brokers {sorted(by_broker)}"
    return [t for listings in by_broker.values() for t in listings]


def test_admin_lists_and_describes_an_open_then_committed_transaction(
    broker: ThreadBroker, admin: Any
) -> None:
    from kafka import TopicPartition

    bootstrap, topic, tid = broker.bootstrap, "admin-visible", txn_id()
    create_topic(bootstrap, topic, PARTITIONS)
    plain_produce(bootstrap, topic, [Rec(0, None, b"plain-0"), Rec(0, None, b"plain-1"), Rec(1, None, b"x")])
    tps = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    producer = make_producer("confluent-kafka", bootstrap, tid, **{"transaction.timeout.ms": TIMEOUT_MS})
    try:
        producer.init()
        producer.begin()
        producer.send(topic, [Rec(i % PARTITIONS, None, f"txn-{i}".encode()) for i in range(4)])

        listed = {t.transactional_id: t for t in listing(admin)}
        assert tid in listed and listed[tid].state.value == "Ongoing", f"listed {listed}"
        assert tid in {t.transactional_id for t in listing(admin, state_filters=["Ongoing"])}

        described = bounded(lambda: admin.describe_transactions([tid]), "describe_transactions")[tid]
        assert described.state.value == "Ongoing"
        assert described.topic_partitions == tps
        assert described.transaction_timeout_ms == TIMEOUT_MS
        assert described.producer_id == listed[tid].producer_id >= 0
        assert described.transaction_start_time_ms > 0

        producers = bounded(lambda: admin.describe_producers(sorted(tps)), "describe_producers")
        starts = {}
        for tp, state in producers.items():
            mine = [p for p in state.active_producers if p.producer_id == described.producer_id]
            assert len(mine) == 1, f"{tp}: active producers {state.active_producers}"
            assert mine[0].producer_epoch == described.producer_epoch
            starts[tp.partition] = mine[0].current_transaction_start_offset
        assert starts == {0: 2, 1: 1}, f"current transaction start offsets {starts}"
        hanging = bounded(admin.find_hanging_transactions, "find_hanging_transactions")
        assert tid not in {h["transactional_id"] for h in hanging}, "a young transaction reported hanging"

        producer.commit()
    finally:
        producer.close()

    def describe() -> Any:
        return bounded(lambda: admin.describe_transactions([tid]), "describe_transactions")[tid]

    # PrepareCommit answers EndTxn; CompleteCommit follows the markers (as in Kafka).
    wait_until(
        lambda: describe().state.value == "CompleteCommit",
        DEADLINE_S,
        "CompleteCommit",
        detail=lambda: f"{describe()}",
    )
    described = describe()
    assert not described.topic_partitions
    assert tid not in {t.transactional_id for t in listing(admin, state_filters=["Ongoing"])}
    producers = bounded(lambda: admin.describe_producers(sorted(tps)), "describe_producers")
    for tp, state in producers.items():
        mine = [p for p in state.active_producers if p.producer_id == described.producer_id]
        assert [p.current_transaction_start_offset for p in mine] == [-1], f"{tp}: {state.active_producers}"
