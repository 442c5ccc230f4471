"""Metadata as Kafka answers it: a topic auto-created by the request comes back LEADER_NOT_AVAILABLE with
no partitions, the next request sees it; all-topics lists the internal topics with is_internal."""

from __future__ import annotations

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

METADATA = 3


@pytest.mark.parametrize("version", [0, 1, 4, 9, 12])
def test_auto_created_topic_is_leader_not_available_first(broker: ThreadBroker, version: int) -> None:
    name = f"fresh-{version}"
    fields: dict[str, object] = dict(topics=[dict(name=name, topic_id=None)])
    if version >= 4:
        fields["allow_auto_topic_creation"] = True
    with WireClient(broker.bootstrap) as client:
        first = client.request(METADATA, version, **fields)
        (topic,) = first.topics
        assert topic.error_code == ErrorCode.LEADER_NOT_AVAILABLE
        assert topic.name == name and list(topic.partitions) == []
        assert not topic.is_internal if version >= 1 else True
        second = client.request(METADATA, version, **fields)
        (topic,) = second.topics
        assert topic.error_code == ErrorCode.NONE
        assert [p.partition_index for p in topic.partitions] == [0]
        assert topic.partitions[0].leader_id == 1


def test_no_auto_creation_is_unknown_topic(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        r = client.request(
            METADATA, 12, topics=[dict(name="nope", topic_id=None)], allow_auto_topic_creation=False
        )
        assert r.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        again = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False)
        assert "nope" not in {t.name for t in again.topics}


def test_internal_topics_listed_once_they_exist(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        client.request(
            10, 4, key_type=0, coordinator_keys=["g"]
        )  # FindCoordinator creates __consumer_offsets
        everything = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False)
        internal = {t.name: t.is_internal for t in everything.topics}
        assert internal.get("__consumer_offsets") is True
        assert "__transaction_state" not in internal  # no transactional producer yet


def test_transaction_state_is_created_by_the_first_find_coordinator_of_a_transactional_id(
    broker: ThreadBroker,
) -> None:
    """As Kafka: FindCoordinator for a transactional id creates `__transaction_state`, before any
    producer initialises."""
    with WireClient(broker.bootstrap) as client:
        found = client.request(10, 4, key_type=1, coordinator_keys=["t"])
        assert found.coordinators[0].error_code == ErrorCode.NONE
        everything = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False)
    internal = {t.name: t.is_internal for t in everything.topics}
    assert internal.get("__transaction_state") is True


def test_transaction_state_is_listed_once_a_transactional_producer_starts(broker: ThreadBroker) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "tail-txn"})
    producer.init_transactions(30)
    with WireClient(broker.bootstrap) as client:
        everything = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False)
    internal = {t.name: t.is_internal for t in everything.topics}
    assert internal.get("__transaction_state") is True
