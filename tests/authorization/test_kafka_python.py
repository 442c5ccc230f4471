"""kafka-python against a broker enforcing ACLs: its admin client grants and lists the ACLs; alice's
producer and consumer are refused before, and work after."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import (
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
)
from kafka.structs import OffsetAndMetadata

from tests.authorization.conftest import AclBroker
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until


def allow(admin: KafkaAdminClient, rt: ResourceType, name: str, op: ACLOperation) -> None:
    acl = ACL("User:alice", "*", op, ACLPermissionType.ALLOW, ResourcePattern(rt, name))
    result = admin.create_acls([acl])
    assert result["failed"] == [], result


@pytest.fixture
def admin(secured: AclBroker) -> KafkaAdminClient:
    client = KafkaAdminClient(**secured.kafka_python("admin"))
    client.create_topics([NewTopic("events", 1, 1)])
    return client


def test_producer_refused_then_allowed(secured: AclBroker, admin: KafkaAdminClient) -> None:
    producer = KafkaProducer(**secured.kafka_python("alice"), max_block_ms=5000, retries=0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("events", b"no").get(DEADLINE_S)
    finally:
        producer.close()
    allow(admin, ResourceType.TOPIC, "events", ACLOperation.WRITE)
    pattern = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    listed = admin.describe_acls(
        ACLFilter("User:alice", None, ACLOperation.ANY, ACLPermissionType.ANY, pattern)
    )
    assert [(a.operation, a.resource_pattern.resource_name) for a in listed[0]] == [
        (ACLOperation.WRITE, "events")
    ]
    producer = KafkaProducer(**secured.kafka_python("alice"))
    try:
        assert producer.send("events", b"yes").get(DEADLINE_S).offset == 0
    finally:
        producer.close()


def test_consumer_group_refused_then_allowed(secured: AclBroker, admin: KafkaAdminClient) -> None:
    producer = KafkaProducer(**secured.kafka_python("admin"))
    producer.send("events", b"one").get(DEADLINE_S)
    producer.close()
    consumer = KafkaConsumer(**secured.kafka_python("alice"), group_id="kp", auto_offset_reset="earliest")
    try:
        tp = TopicPartition("events", 0)
        with pytest.raises(GroupAuthorizationFailedError):
            consumer.commit({tp: OffsetAndMetadata(1, "", -1)})
    finally:
        consumer.close()
    allow(admin, ResourceType.GROUP, "kp", ACLOperation.READ)
    allow(admin, ResourceType.TOPIC, "events", ACLOperation.READ)
    consumer = KafkaConsumer(
        **secured.kafka_python("alice"), group_id="kp", auto_offset_reset="earliest", enable_auto_commit=False
    )
    try:
        subscribe(consumer, ["events"])
        got: list[bytes] = []

        def polled() -> bool:
            for records in consumer.poll(200).values():
                got.extend(r.value for r in records)
            return bool(got)

        wait_until(polled, what="the record")
        assert got == [b"one"]
        consumer.commit()
        assert consumer.committed(TopicPartition("events", 0)) == 1
    finally:
        consumer.close()
