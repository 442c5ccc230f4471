"""KafkaJS transactions, as far as its API goes: producer.transaction() commits and aborts, and
transaction.sendOffsets commits a group's offsets with the transaction (by group id only: KafkaJS has
no KIP-447 group metadata). KafkaJS's own consumer (read_committed by default, and with
readUncommitted) reads the records back."""

from __future__ import annotations

import uuid

from tests.compat.clients.base import TxnStep, wait_for_consumers
from tests.compat.clients.kafkajs_client import KafkaJSDriver
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.logview import offset_fetch, wait_settled
from tests.transactions_e2e.producers import txn_id
from tests.transactions_e2e.readers import Collector, append_sentinels, values_of

PARTITIONS = 2


def read_with_kafkajs(bootstrap: str, topic: str, read_uncommitted: bool) -> Collector:
    """A KafkaJS consumer alone in a new group, from the beginning, until the sentinels "end"."""
    driver = KafkaJSDriver()
    consumer = driver._consumer(
        f"kafkajs-{topic}", bootstrap=bootstrap, topic=topic, group=f"reader-{uuid.uuid4().hex[:8]}",
        start="earliest", readUncommitted=read_uncommitted,
    )  # fmt: skip
    consumer.start()
    try:
        wait_for_consumers(
            lambda: Collector(PARTITIONS, "end").take(consumer.feed.records),
            "KafkaJS to read to the end",
            [consumer],
        )
    finally:
        consumer.stop()
    collector = Collector(PARTITIONS, "end")
    collector.take(consumer.feed.records)
    return collector


def test_kafkajs_transactions_commit_abort_and_send_offsets(broker: ThreadBroker) -> None:
    bootstrap, topic, group = broker.bootstrap, "kafkajs-txn", "kafkajs-txn-group"
    create_topic(bootstrap, topic, PARTITIONS)
    first = [Rec(i % PARTITIONS, None, f"first-{i}".encode()) for i in range(10)]
    aborted = [Rec(i % PARTITIONS, None, f"aborted-{i}".encode()) for i in range(6)]
    last = [Rec(i % PARTITIONS, None, f"last-{i}".encode()) for i in range(4)]
    KafkaJSDriver().transact(bootstrap, topic, txn_id(), [
        TxnStep(first, commit=True, group=group, offsets={0: 3, 1: 4}),
        TxnStep(aborted, commit=False, group=group, offsets={0: 8, 1: 9}),
        TxnStep(last, commit=True),
    ])  # fmt: skip

    wait_settled(bootstrap, topic, PARTITIONS)
    wait_until(  # the offsets are committed by the marker on __consumer_offsets, which may follow EndTxn
        lambda: offset_fetch(bootstrap, group, topic, PARTITIONS, True) == {0: (0, 3), 1: (0, 4)},
        DEADLINE_S, "the committed offsets of the first transaction",
        detail=lambda: f"{offset_fetch(bootstrap, group, topic, PARTITIONS, True)}",
    )  # fmt: skip
    append_sentinels(bootstrap, topic, PARTITIONS, "end")
    assert read_with_kafkajs(bootstrap, topic, False).values() == values_of(first + last, PARTITIONS)
    assert read_with_kafkajs(bootstrap, topic, True).values() == values_of(first + aborted + last, PARTITIONS)
