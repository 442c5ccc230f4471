"""The streams group APIs under ACLs (StandardAuthorizer), as Kafka 4.4's KafkaApis checks them: READ on the
group and DESCRIBE on every topic of the topology for a heartbeat, CREATE on the cluster or the topics
for the internal topics it creates, DESCRIBE on the group and its topology's topics for Describe; and
KafkaApis' own refusal of a topology naming a Kafka internal topic or an invalid name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker, acl_broker
from tests.authorization.test_confluent import create_topic, grant
from tests.streams_groups.test_wire import CHANGELOG, REPARTITION, beat, join, word_count
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

ANON = "User:ANONYMOUS"
MISSING_INTERNAL_TOPICS = 3
IMMEDIATE = {"group.streams.initial.rebalance.delay.ms": "0", "group.streams.assignment.interval.ms": "0"}


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[AclBroker]:
    thread = acl_broker(tmp_path / "acl", **IMMEDIATE).start()
    broker = AclBroker(thread)
    create_topic(broker, "words", 2)
    yield broker
    thread.stop()


def allow(broker: AclBroker, rt: ResourceType, name: str, op: AclOperation) -> None:
    grant(broker, rt, name, op, principal=ANON)


def exists(broker: AclBroker, topic: str) -> bool:
    thread = broker.thread
    assert thread.broker is not None
    return thread.call(lambda: thread.broker.services.topics.get(topic)) is not None  # type: ignore[union-attr]


def describe(client: WireClient, *groups: str) -> dict[str, Any]:
    answer = client.request(
        89, 1, group_ids=list(groups), include_authorized_operations=False, include_topology_description=False
    )
    return {g.group_id: g for g in answer.groups}


def test_a_heartbeat_needs_read_on_the_group_and_describe_on_every_topic(secured: AclBroker) -> None:
    with WireClient(secured.plaintext) as client:
        refused = join(client, "sg", "m1")
        assert (refused.error_code, refused.error_message, refused.status) == (
            ErrorCode.GROUP_AUTHORIZATION_FAILED,
            None,
            [],
        )
        allow(secured, ResourceType.GROUP, "sg", AclOperation.READ)
        allow(secured, ResourceType.TOPIC, "words", AclOperation.DESCRIBE)
        allow(secured, ResourceType.TOPIC, REPARTITION, AclOperation.DESCRIBE)
        refused = join(client, "sg", "m1")  # the changelog may not be described
        assert (refused.error_code, refused.error_message) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
        allow(secured, ResourceType.TOPIC, CHANGELOG, AclOperation.DESCRIBE)
        joined = join(client, "sg", "m1")
        assert joined.error_code == ErrorCode.NONE


def test_internal_topics_are_created_only_with_create_on_the_cluster_or_topics(secured: AclBroker) -> None:
    allow(secured, ResourceType.GROUP, "sg", AclOperation.READ)
    for topic in ("words", REPARTITION, CHANGELOG):
        allow(secured, ResourceType.TOPIC, topic, AclOperation.DESCRIBE)
    allow(secured, ResourceType.TOPIC, CHANGELOG, AclOperation.CREATE)
    with WireClient(secured.plaintext) as client:
        joined = join(client, "sg", "m1")
        assert joined.error_code == ErrorCode.NONE
        [(code, detail)] = [(s.status_code, s.status_detail) for s in joined.status]
        assert code == MISSING_INTERNAL_TOPICS
        assert detail.endswith(f"; Unauthorized to CREATE on topics {REPARTITION}.")
        assert not exists(secured, CHANGELOG) and not exists(secured, REPARTITION)  # none of them
        allow(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE)
        again = beat(client, "sg", "m1", joined.member_epoch, owned=[])
        assert [s.status_detail for s in again.status] == [
            f"Internal topics are missing: {CHANGELOG}, {REPARTITION}"
        ]
        assert exists(secured, CHANGELOG) and exists(secured, REPARTITION)


def test_describe_needs_describe_on_the_group_and_its_topics(secured: AclBroker) -> None:
    allow(secured, ResourceType.GROUP, "sg", AclOperation.READ)
    allow(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.CREATE)
    for topic in ("words", REPARTITION, CHANGELOG):
        allow(secured, ResourceType.TOPIC, topic, AclOperation.DESCRIBE)
    with WireClient(secured.plaintext) as client:
        joined = join(client, "sg", "m1")
        assert beat(client, "sg", "m1", joined.member_epoch, owned=[]).error_code == ErrorCode.NONE  # ready
        described = describe(client, "sg", "other")  # READ on sg implies DESCRIBE; nothing on other
        assert described["other"].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        assert described["sg"].error_code == ErrorCode.NONE and described["sg"].topology is not None
        binding = AclBindingFilter(ResourceType.TOPIC, CHANGELOG, ResourcePatternType.LITERAL, ANON, "*",
                                   AclOperation.DESCRIBE, AclPermissionType.ALLOW)  # fmt: skip
        admin = AdminClient(secured.confluent("admin"))
        for deleted in admin.delete_acls([binding]).values():
            deleted.result(10)
        hidden = describe(client, "sg")["sg"]
        assert (hidden.error_code, hidden.error_message) == (
            ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            "The described group uses topics that the client is not authorized to describe.",
        )
        assert hidden.members == [] and hidden.topology is None


def test_a_topology_naming_a_kafka_internal_topic_or_an_invalid_name_is_refused(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        internal = join(client, "sg", "m1", topology=word_count(source="__consumer_offsets"))
        assert (internal.error_code, internal.error_message) == (
            ErrorCode.STREAMS_INVALID_TOPOLOGY,
            "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited.",
        )
        invalid = join(client, "sg", "m1", topology=word_count(source="no spaces"))
        assert (invalid.error_code, invalid.error_message) == (
            ErrorCode.STREAMS_INVALID_TOPOLOGY,
            "Topic names no spaces are not valid topic names.",
        )
