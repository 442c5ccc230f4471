"""A transaction left open past its transaction.timeout.ms is aborted by the broker on its own: its
markers are written, read_committed readers move on without its records, and its producer cannot
commit it any more."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.logview import high_watermarks, settled, stable_offsets
from tests.transactions_e2e.producers import PRODUCERS, make_producer, txn_id
from tests.transactions_e2e.readers import append_sentinels, read, values_of

PARTITIONS = 2
TXN_TIMEOUT_MS = 3000  # long enough to check the transaction is open before it times out
TIMEOUT_CONF = {"confluent-kafka": {"transaction.timeout.ms": TXN_TIMEOUT_MS},
                "kafka-python": {"transaction_timeout_ms": TXN_TIMEOUT_MS}}  # fmt: skip


@pytest.mark.parametrize("client", PRODUCERS)
def test_a_timed_out_transaction_is_aborted_by_the_broker(
    client: str, broker_factory: Callable[..., ThreadBroker]
) -> None:
    broker = broker_factory(
        group_initial_rebalance_delay_ms=0, transaction_abort_timed_out_transaction_cleanup_interval_ms=200
    )
    bootstrap, topic = broker.bootstrap, f"timeout-{client}"
    create_topic(bootstrap, topic, PARTITIONS)
    shared_id = txn_id()
    producer = make_producer(client, bootstrap, shared_id, **TIMEOUT_CONF[client])
    try:
        producer.init()
        producer.begin()
        abandoned = [Rec(i % PARTITIONS, None, f"abandoned-{i}".encode()) for i in range(6)]
        producer.send(topic, abandoned)
        ends = high_watermarks(bootstrap, topic, PARTITIONS)
        assert stable_offsets(bootstrap, topic, PARTITIONS) == dict.fromkeys(range(PARTITIONS), 0)

        wait_until(
            lambda: settled(bootstrap, topic, PARTITIONS),
            DEADLINE_S,
            "the broker to abort the transaction",
            detail=lambda: f"LSO {stable_offsets(bootstrap, topic, PARTITIONS)}, HW {ends} before",
        )
        assert high_watermarks(bootstrap, topic, PARTITIONS) == {p: ends[p] + 1 for p in ends}, (
            "one ABORT marker each"
        )
        with pytest.raises(Exception):  # noqa: B017 - fenced or abortable, as the client names it
            producer.commit()
    finally:
        producer.close()

    # The id is usable again: a new producer commits under it.
    successor = make_producer(client, bootstrap, shared_id, **TIMEOUT_CONF[client])
    try:
        successor.init()
        successor.begin()
        kept = [Rec(i % PARTITIONS, None, f"kept-{i}".encode()) for i in range(4)]
        successor.send(topic, kept)
        successor.commit()
    finally:
        successor.close()

    append_sentinels(bootstrap, topic, PARTITIONS, "end")
    assert read("aiokafka", bootstrap, topic, PARTITIONS, "read_committed", "end").values() == values_of(
        kept, PARTITIONS
    )
    everything = read("aiokafka", bootstrap, topic, PARTITIONS, "read_uncommitted", "end").values()
    assert everything == values_of(abandoned + kept, PARTITIONS)


def test_a_timeout_above_the_brokers_maximum_is_refused(broker_factory: Callable[..., ThreadBroker]) -> None:
    """transaction.timeout.ms over transaction.max.timeout.ms: InitProducerId answers
    INVALID_TRANSACTION_TIMEOUT, which librdkafka reports as a fatal error."""
    from confluent_kafka import KafkaError, KafkaException

    broker = broker_factory(transaction_max_timeout_ms=5000)
    producer = make_producer(
        "confluent-kafka", broker.bootstrap, txn_id(), **{"transaction.timeout.ms": 6000}
    )
    try:
        with pytest.raises(KafkaException) as info:
            producer.init()
        error = info.value.args[0]
        assert error.code() == KafkaError.INVALID_TRANSACTION_TIMEOUT, (
            f"init_transactions failed with {error}"
        )
    finally:
        producer.close()
