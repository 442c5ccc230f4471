"""confluent-kafka (librdkafka) against a broker enforcing ACLs: alice (SASL PLAIN) without ACLs gets
Kafka's authorization errors; once the super user grants them through the admin client's ACL calls,
the same calls succeed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.authorization.conftest import AclBroker
from tests.support.waiting import DEADLINE_S, wait_until

ALLOW = AclPermissionType.ALLOW


def grant(
    broker: AclBroker, rt: ResourceType, name: str, op: AclOperation, principal: str = "User:alice",
    pattern: ResourcePatternType = ResourcePatternType.LITERAL, permission: AclPermissionType = ALLOW,
) -> None:  # fmt: skip
    admin = AdminClient(broker.confluent("admin"))
    binding = AclBinding(rt, name, pattern, principal, "*", op, permission)
    for future in admin.create_acls([binding]).values():
        future.result(DEADLINE_S)


def create_topic(broker: AclBroker, name: str, partitions: int = 1) -> None:
    admin = AdminClient(broker.confluent("admin"))
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(DEADLINE_S)


def produce(config: dict[str, Any], topic: str, count: int = 1) -> list[KafkaError | None]:
    errors: list[KafkaError | None] = []
    producer = Producer(config)
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(DEADLINE_S)
    return errors


def first_error(consumer: Consumer) -> KafkaError:
    def polled() -> KafkaError | None:
        message = consumer.poll(0.2)
        return message.error() if message is not None and message.error() is not None else None

    return wait_until(polled, what="an error from the consumer")


@pytest.fixture
def orders(secured: AclBroker) -> str:
    create_topic(secured, "orders", 2)
    return "orders"


def test_produce_is_refused_then_allowed_by_a_write_acl(secured: AclBroker, orders: str) -> None:
    errors = produce(secured.confluent("alice"), orders)
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    grant(secured, ResourceType.TOPIC, orders, AclOperation.WRITE)
    assert produce(secured.confluent("alice"), orders, 3) == [None, None, None]


def test_consumer_group_needs_group_and_topic_read(secured: AclBroker, orders: str) -> None:
    assert produce(secured.confluent("admin"), orders, 4) == [None] * 4
    config = secured.confluent("alice", **{"group.id": "readers", "auto.offset.reset": "earliest"})
    consumer = Consumer({**config, "enable.auto.commit": False})
    consumer.subscribe([orders])
    try:
        assert first_error(consumer).code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    grant(secured, ResourceType.GROUP, "readers", AclOperation.READ)
    consumer = Consumer({**config, "enable.auto.commit": False})
    consumer.subscribe([orders])
    try:  # the group may be joined now, the topic not read
        assert first_error(consumer).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    grant(secured, ResourceType.TOPIC, orders, AclOperation.READ)
    consumer = Consumer({**config, "enable.auto.commit": False})
    consumer.subscribe([orders])
    try:
        got: list[bytes] = []

        def received() -> bool:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is None, message.error()
                got.append(message.value())
            return len(got) == 4

        wait_until(received, what="four records")
        committed = consumer.commit(asynchronous=False)
        assert committed is not None and all(tp.error is None for tp in committed)
        offsets = consumer.committed([TopicPartition(orders, 0), TopicPartition(orders, 1)], DEADLINE_S)
        assert sum(tp.offset for tp in offsets if tp.offset >= 0) == 4  # a partition may hold none
    finally:
        consumer.close()


def test_commit_of_a_topic_without_read_is_refused(secured: AclBroker, orders: str) -> None:
    grant(secured, ResourceType.GROUP, "committers", AclOperation.READ)
    consumer = Consumer(secured.confluent("alice", **{"group.id": "committers"}))
    try:
        with pytest.raises(KafkaException) as refused:
            consumer.commit(offsets=[TopicPartition(orders, 0, 1)], asynchronous=False)
        assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        grant(secured, ResourceType.TOPIC, orders, AclOperation.READ)
        done = consumer.commit(offsets=[TopicPartition(orders, 0, 1)], asynchronous=False)
        assert done is not None and [tp.error for tp in done] == [None]
    finally:
        consumer.close()


def test_topic_creation_needs_create(secured: AclBroker) -> None:
    admin = AdminClient(secured.confluent("alice"))

    def create(name: str) -> None:
        for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
            future.result(DEADLINE_S)

    with pytest.raises(KafkaException) as refused:
        create("payments")
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    grant(secured, ResourceType.TOPIC, "pay", AclOperation.CREATE, pattern=ResourcePatternType.PREFIXED)
    create("payments")
    with pytest.raises(KafkaException):
        create("refunds")  # the prefix does not cover it
    grant(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE)
    create("refunds")


def test_transactional_id_needs_write(secured: AclBroker, orders: str) -> None:
    grant(secured, ResourceType.TOPIC, orders, AclOperation.WRITE)
    config = secured.confluent("alice", **{"transactional.id": "billing"})
    with pytest.raises(KafkaException) as refused:
        Producer(config).init_transactions(DEADLINE_S)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(secured, ResourceType.TRANSACTIONAL_ID, "billing", AclOperation.WRITE)
    producer = Producer(config)
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce(orders, b"in a transaction")
    producer.commit_transaction(DEADLINE_S)


def test_idempotent_producer_needs_write_on_some_topic(secured: AclBroker, orders: str) -> None:
    config = secured.confluent("alice", **{"enable.idempotence": True})
    errors = produce(config, orders)
    codes = {e.code() if e else None for e in errors}
    assert len(errors) == 1 and codes <= {
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    }
    grant(secured, ResourceType.TOPIC, orders, AclOperation.WRITE)
    assert produce(config, orders) == [None]


def test_super_users_need_no_acl(secured: AclBroker, orders: str) -> None:
    assert produce(secured.confluent("admin"), orders) == [None]
    admin = AdminClient(secured.confluent("admin"))
    assert orders in admin.list_topics(timeout=DEADLINE_S).topics


def test_metadata_lists_only_described_topics(secured: AclBroker) -> None:
    for name in ("alpha", "beta", "gamma"):
        create_topic(secured, name)
    admin = AdminClient(secured.confluent("alice"))
    assert set(admin.list_topics(timeout=DEADLINE_S).topics) == set()
    grant(secured, ResourceType.TOPIC, "alpha", AclOperation.DESCRIBE)
    grant(secured, ResourceType.TOPIC, "beta", AclOperation.WRITE)  # WRITE implies DESCRIBE
    assert set(admin.list_topics(timeout=DEADLINE_S).topics) == {"alpha", "beta"}
    named = admin.list_topics("gamma", timeout=DEADLINE_S).topics["gamma"]
    assert named.error is not None and named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_deny_wins_over_an_allow(secured: AclBroker, orders: str) -> None:
    grant(secured, ResourceType.TOPIC, "*", AclOperation.ALL)
    assert produce(secured.confluent("alice"), orders) == [None]
    grant(secured, ResourceType.TOPIC, orders, AclOperation.WRITE, permission=AclPermissionType.DENY)
    errors = produce(secured.confluent("alice"), orders)
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]


def test_allow_everyone_if_no_acl_found(acl_broker_factory: Callable[..., AclBroker]) -> None:
    broker = acl_broker_factory(**{"allow.everyone.if.no.acl.found": "true"})
    create_topic(broker, "open")
    create_topic(broker, "guarded")
    assert produce(broker.confluent("alice"), "open") == [None]
    grant(broker, ResourceType.TOPIC, "guarded", AclOperation.WRITE, principal="User:bob")
    errors = produce(broker.confluent("alice"), "guarded")  # an ACL applies: the default does not
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    assert produce(broker.confluent("bob"), "guarded") == [None]


def test_offsets_in_a_transaction_need_the_group(secured: AclBroker, orders: str) -> None:
    grant(secured, ResourceType.TOPIC, orders, AclOperation.WRITE)
    grant(secured, ResourceType.TOPIC, orders, AclOperation.READ)
    grant(secured, ResourceType.TRANSACTIONAL_ID, "etl", AclOperation.WRITE)
    producer = Producer(secured.confluent("alice", **{"transactional.id": "etl"}))
    producer.init_transactions(DEADLINE_S)
    group = Consumer(secured.confluent("alice", **{"group.id": "etl-group"})).consumer_group_metadata()
    producer.begin_transaction()
    producer.produce(orders, b"out")
    with pytest.raises(KafkaException) as refused:
        producer.send_offsets_to_transaction([TopicPartition(orders, 0, 1)], group, DEADLINE_S)
    assert refused.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    producer.abort_transaction(DEADLINE_S)
    grant(secured, ResourceType.GROUP, "etl-group", AclOperation.READ)
    producer.begin_transaction()
    producer.produce(orders, b"out")
    producer.send_offsets_to_transaction([TopicPartition(orders, 0, 1)], group, DEADLINE_S)
    producer.commit_transaction(DEADLINE_S)


def test_kip848_consumer_needs_group_read_and_topic_describe(secured: AclBroker, orders: str) -> None:
    assert produce(secured.confluent("admin"), orders) == [None]
    config = secured.confluent(
        "alice", **{"group.id": "modern", "group.protocol": "consumer", "auto.offset.reset": "earliest"}
    )
    consumer = Consumer(config)
    consumer.subscribe([orders])
    try:
        assert first_error(consumer).code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    grant(secured, ResourceType.GROUP, "modern", AclOperation.READ)
    grant(secured, ResourceType.TOPIC, orders, AclOperation.READ)
    consumer = Consumer(config)
    consumer.subscribe([orders])
    try:

        def received() -> bool:
            message = consumer.poll(0.2)
            assert message is None or message.error() is None, message.error() if message else None
            return message is not None

        wait_until(received, what="a record through a KIP-848 group")
    finally:
        consumer.close()
