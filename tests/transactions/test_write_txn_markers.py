"""WriteTxnMarkers (27) from a client, as an Admin's abortTransaction sends it: the marker ends the
producer's open transaction on the partition (the last stable offset moves past it and a read_committed
consumer skips its records), each partition answered in the request's order with Kafka's errors
(UNKNOWN_TOPIC_OR_PARTITION, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED), and
CLUSTER_AUTHORIZATION_FAILED for a principal without CLUSTER_ACTION."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    AbortTransactionSpec,
    ACLOperation,
    ACLPermissionType,
    NewTopic,
    ResourcePattern,
    ResourceType,
)
from kafka.errors import ClusterAuthorizationFailedError

from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker, acl_broker
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

E = ErrorCode
WRITE_TXN_MARKERS, LIST_OFFSETS, DESCRIBE_PRODUCERS = 27, 2, 61
TOPIC = "markers"


def _marker(pid: int, epoch: int, partitions: dict[str, list[int]], coordinator_epoch: int = 0,
            commit: bool = False) -> dict[str, Any]:  # fmt: skip
    topics = [dict(name=name, partition_indexes=indexes) for name, indexes in partitions.items()]
    return dict(
        producer_id=pid, producer_epoch=epoch, transaction_result=commit, topics=topics,
        coordinator_epoch=coordinator_epoch,
    )  # fmt: skip


def _write(wire: WireClient, *markers: dict[str, Any], version: int = 1) -> list[tuple[int, str, int, int]]:
    """(producer id, topic, partition, error) of each answer, in the response's order."""
    response = wire.request(WRITE_TXN_MARKERS, version, markers=list(markers))
    return [(m.producer_id, t.name, p.partition_index, p.error_code)
            for m in response.markers for t in m.topics for p in t.partitions]  # fmt: skip


def _stable_offset(wire: WireClient, partition: int = 0) -> int:
    """The partition's last stable offset (ListOffsets latest, read_committed)."""
    topics = [dict(name=TOPIC, partitions=[dict(partition_index=partition, timestamp=-1)])]
    response = wire.request(LIST_OFFSETS, 2, replica_id=-1, isolation_level=1, topics=topics)
    answer = response.topics[0].partitions[0]
    assert answer.error_code == E.NONE
    return int(answer.offset)


def _producers(wire: WireClient, partition: int = 0) -> list[Any]:
    response = wire.request(DESCRIBE_PRODUCERS, 0, topics=[dict(name=TOPIC, partition_indexes=[partition])])
    return list(response.topics[0].partitions[0].active_producers)


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[AclBroker]:
    """A broker enforcing ACLs: User:admin a super user, alice and User:ANONYMOUS without ACLs."""
    thread = acl_broker(tmp_path / "acl-data").start()
    yield AclBroker(thread)
    thread.stop()


@pytest.fixture
def wire(broker: ThreadBroker) -> Iterator[WireClient]:
    create_topic(broker.bootstrap, TOPIC, partitions=2)
    with WireClient(broker.bootstrap) as client:
        yield client


def test_an_abort_marker_ends_an_open_transaction(broker: ThreadBroker, wire: WireClient) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="hanging")
    producer.init_transactions()
    producer.begin_transaction()
    for value in (b"one", b"two"):
        producer.send(TOPIC, value, partition=0).get(10)
    try:
        assert _stable_offset(wire) == 0  # held at the open transaction's first offset
        [open_txn] = _producers(wire)
        assert open_txn.current_txn_start_offset == 0

        marker = _marker(open_txn.producer_id, open_txn.producer_epoch, {TOPIC: [0]},
                         coordinator_epoch=open_txn.coordinator_epoch)  # fmt: skip
        assert _write(wire, marker) == [(open_txn.producer_id, TOPIC, 0, E.NONE)]

        assert _stable_offset(wire) == 3  # the two records and the marker
        [closed] = _producers(wire)
        assert closed.current_txn_start_offset == -1
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap, isolation_level="read_committed", auto_offset_reset="earliest"
        )
        consumer.assign([TopicPartition(TOPIC, 0)])
        assert consumer.poll(2_000) == {}  # aborted: nothing to read
        consumer.close()
    finally:
        producer.close(timeout=1)


def test_each_partition_is_answered_in_order_with_kafkas_errors(wire: WireClient) -> None:
    pid = 4242
    first = _marker(pid, 5, {TOPIC: [1, 0], "no-such-topic": [0]}, coordinator_epoch=3, commit=True)
    missing = _marker(pid + 1, 0, {TOPIC: [7]})
    assert _write(wire, first, missing, version=2) == [
        (pid, TOPIC, 1, E.NONE),
        (pid, TOPIC, 0, E.NONE),
        (pid, "no-such-topic", 0, E.UNKNOWN_TOPIC_OR_PARTITION),
        (pid + 1, TOPIC, 7, E.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    [written] = _producers(wire)
    assert (written.producer_id, written.producer_epoch, written.coordinator_epoch) == (pid, 5, 3)

    older_epoch = _marker(pid, 4, {TOPIC: [0]}, coordinator_epoch=3)
    older_coordinator = _marker(pid, 5, {TOPIC: [0]}, coordinator_epoch=2)
    assert _write(wire, older_epoch, older_coordinator) == [
        (pid, TOPIC, 0, E.INVALID_PRODUCER_EPOCH),
        (pid, TOPIC, 0, E.TRANSACTION_COORDINATOR_FENCED),
    ]
    assert _write(wire) == []


def test_writing_markers_needs_cluster_action(secured: AclBroker) -> None:
    admin = KafkaAdminClient(**secured.kafka_python("admin"))  # a super user
    alice = KafkaAdminClient(**secured.kafka_python("alice"))  # no ACLs
    try:
        admin.create_topics([NewTopic(TOPIC, 2, 1)])
        with WireClient(secured.plaintext) as anonymous:
            # Kafka's getErrorResponse: every partition, in the order of its hash map (1 before 0 here)
            assert _write(anonymous, _marker(7, 0, {TOPIC: [0, 1]})) == [
                (7, TOPIC, 1, E.CLUSTER_AUTHORIZATION_FAILED),
                (7, TOPIC, 0, E.CLUSTER_AUTHORIZATION_FAILED),
            ]
        # alice may see the topic (the Admin client looks its leader up), not act for the cluster
        topic = ResourcePattern(ResourceType.TOPIC, TOPIC)
        admin.create_acls([ACL("User:alice", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW, topic)])
        spec = AbortTransactionSpec(TopicPartition(TOPIC, 0), 7, 0, -1)
        with pytest.raises(ClusterAuthorizationFailedError):
            alice.abort_transaction(spec)
        admin.abort_transaction(spec)  # CLUSTER_ACTION: written
    finally:
        alice.close()
        admin.close()
