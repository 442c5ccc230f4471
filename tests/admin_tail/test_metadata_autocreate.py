"""Metadata as Kafka 4 answers it: a topic auto-created by the request comes back UNKNOWN_TOPIC_OR_PARTITION
with no partitions, the next request sees it; all-topics lists the internal topics with is_internal;
without an authorizer every operation is reported when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

import kafkito.testing
from kafkito.broker.security.supported_operations import CLUSTER_OPERATIONS, TOPIC_OPERATIONS
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

METADATA = 3


@pytest.mark.parametrize("version", [0, 1, 4, 9, 12])
def test_auto_created_topic_is_unknown_first(broker: ThreadBroker, version: int) -> None:
    name = f"fresh-{version}"
    fields: dict[str, object] = dict(topics=[dict(name=name, topic_id=None)])
    if version >= 4:
        fields["allow_auto_topic_creation"] = True
    with WireClient(broker.bootstrap) as client:
        first = client.request(METADATA, version, **fields)
        (topic,) = first.topics
        assert topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
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


@pytest.mark.parametrize("version", [8, 10, 11, 12])
def test_every_operation_is_reported_without_an_authorizer(broker: ThreadBroker, version: int) -> None:
    """Each named topic (known, unknown, auto-created) and, up to v10, the cluster."""
    asked = dict(
        topics=[
            dict(name=n, topic_id=None) for n in (f"ops-known-{version}", f"ops-auto-{version}", "bad/name")
        ],
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=True,
        include_cluster_authorized_operations=True,
    )
    with WireClient(broker.bootstrap) as client:
        client.request(METADATA, version, **dict(asked, topics=asked["topics"][:1]))  # creates the first
        r = client.request(METADATA, version, **asked)
        quiet = client.request(
            METADATA,
            version,
            **dict(
                asked, include_topic_authorized_operations=False, include_cluster_authorized_operations=False
            ),
        )
    assert [t.error_code for t in r.topics] == [0, 3, 17]
    assert [t.authorized_operations for t in r.topics] == [set(TOPIC_OPERATIONS)] * 3
    assert r.authorized_operations == (set(CLUSTER_OPERATIONS) if version <= 10 else None)
    assert [t.authorized_operations for t in quiet.topics] == [None] * 3
    assert quiet.authorized_operations is None


def test_every_operation_is_reported_by_a_cluster_without_an_authorizer(tmp_path: Path) -> None:
    """A multi-node cluster's answer is built by the codec, not encoded by hand: the same operations."""
    with (
        kafkito.testing.start(nodes=3, data_dir=tmp_path, log_level="warning") as cluster,
        WireClient(cluster.nodes[0].bootstrap_servers) as client,
    ):
        r = client.request(
            METADATA, 10, topics=[dict(name="ops-nope", topic_id=None)], allow_auto_topic_creation=False,
            include_topic_authorized_operations=True, include_cluster_authorized_operations=True,
        )  # fmt: skip
    assert r.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert r.topics[0].authorized_operations == set(TOPIC_OPERATIONS)
    assert r.authorized_operations == set(CLUSTER_OPERATIONS)
