"""A zombie: a second producer with the same transactional.id fences the first. The zombie's open
transaction is aborted, its commit fails with PRODUCER_FENCED (or INVALID_PRODUCER_EPOCH, as the
client maps it), and read_committed readers never see its records."""

from __future__ import annotations

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.transactions_e2e.logview import settled
from tests.transactions_e2e.producers import PRODUCERS, TxnProducer, make_producer, txn_id
from tests.transactions_e2e.readers import append_sentinels, read, values_of

PARTITIONS = 2


def recs(name: str, n: int) -> list[Rec]:
    return [Rec(i % PARTITIONS, None, f"{name}-{i}".encode()) for i in range(n)]


def assert_fenced(client: str, zombie: TxnProducer) -> None:
    """The zombie's commit fails with the client's fencing error."""
    if client == "confluent-kafka":
        from confluent_kafka import KafkaError, KafkaException

        with pytest.raises(KafkaException) as info:
            zombie.commit()
        error = info.value.args[0]
        fenced = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}
        assert error.code() in fenced and error.fatal(), f"the zombie's commit failed with {error}"
    else:
        from kafka.errors import InvalidProducerEpochError, ProducerFencedError

        with pytest.raises((ProducerFencedError, InvalidProducerEpochError)):
            zombie.commit()


@pytest.mark.parametrize("client", PRODUCERS)
def test_second_producer_with_the_same_id_fences_the_first(client: str, broker: ThreadBroker) -> None:
    topic = f"zombie-{client}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    shared_id = txn_id()
    zombie = make_producer(client, broker.bootstrap, shared_id)
    successor = make_producer(client, broker.bootstrap, shared_id)
    try:
        zombie.init()
        zombie.begin()
        zombie_recs = recs("zombie", 6)
        zombie.send(topic, zombie_recs)  # acknowledged, inside an open transaction

        successor.init()  # bumps the epoch, aborting the zombie's transaction first
        assert settled(broker.bootstrap, topic, PARTITIONS), "the zombie's transaction is still open"
        assert_fenced(client, zombie)

        successor.begin()
        fresh = recs("successor", 6)
        successor.send(topic, fresh)
        successor.commit()
    finally:
        zombie.close()
        successor.close()

    append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
    committed = read("confluent-kafka", broker.bootstrap, topic, PARTITIONS, "read_committed", "end")
    assert committed.values() == values_of(fresh, PARTITIONS)
    everything = read("confluent-kafka", broker.bootstrap, topic, PARTITIONS, "read_uncommitted", "end")
    assert everything.values() == values_of(zombie_recs + fresh, PARTITIONS)
