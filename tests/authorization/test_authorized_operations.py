"""The authorized-operations fields as Kafka 4 fills them: every operation Kafka supports on the resource
(AclEntry.supportedOperations; a group's include DESCRIBE_CONFIGS and ALTER_CONFIGS since 4.0) without
an authorizer, the principal's with one, and Integer.MIN_VALUE when the request did not ask."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka.admin import AclOperation, ResourceType

from tests.authorization.conftest import AclBroker
from tests.authorization.test_confluent import create_topic, grant
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
TOPIC_OPS = {READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS}
GROUP_OPS = {READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS}
CLUSTER_OPS = {CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE}
NOT_REQUESTED = -(2**31)
ANON = "User:ANONYMOUS"


def as_bits(operations: set[int]) -> int:
    return sum(1 << op for op in operations)


def consumer_group(client: WireClient, group: str) -> None:
    joined = client.request(
        68, 0, group_id=group, member_id=str(uuid.uuid4()), member_epoch=0, instance_id=None, rack_id=None,
        rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], server_assignor=None, topic_partitions=[],
    )  # fmt: skip
    assert joined.error_code == 0


def share_group(client: WireClient, group: str) -> None:
    beat = client.request(
        76, 1, group_id=group, member_id=str(uuid.uuid4()), member_epoch=0, rack_id=None,
        subscribed_topic_names=["t"],
    )  # fmt: skip
    assert beat.error_code == 0


def simple_group(client: WireClient, group: str) -> None:
    partitions = [
        dict(partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")
    ]
    response = client.request(
        8, 9, group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        topics=[dict(name="t", partitions=partitions)],
    )  # fmt: skip
    assert response.topics[0].partitions[0].error_code == 0


@pytest.fixture
def open_broker(broker: ThreadBroker) -> ThreadBroker:
    assert broker.broker is not None
    logs = broker.broker.logs
    broker.call(lambda: logs.create_topic("t", 1))
    return broker


def test_groups_without_an_authorizer_report_every_group_operation(open_broker: ThreadBroker) -> None:
    with WireClient(open_broker.bootstrap) as client:
        simple_group(client, "classic")
        consumer_group(client, "kip848")
        share_group(client, "shared")
        described = client.request(15, 5, groups=["classic", "gone"], include_authorized_operations=True)
        # Before v6 an unknown group is described Dead with no error, so it gets them too.
        assert [(g.error_code, g.authorized_operations) for g in described.groups] == [
            (0, GROUP_OPS),
            (0, GROUP_OPS),
        ]
        [gone] = client.request(15, 6, groups=["gone"], include_authorized_operations=True).groups
        assert gone.authorized_operations is None  # GROUP_ID_NOT_FOUND: Integer.MIN_VALUE
        [classic] = client.request(15, 5, groups=["classic"], include_authorized_operations=False).groups
        assert classic.authorized_operations is None
        for api, group in ((69, "kip848"), (77, "shared")):
            version = 0 if api == 69 else 1
            asked = client.request(api, version, group_ids=[group], include_authorized_operations=True)
            assert asked.groups[0].authorized_operations == as_bits(GROUP_OPS), api
            unasked = client.request(api, version, group_ids=[group], include_authorized_operations=False)
            assert unasked.groups[0].authorized_operations == NOT_REQUESTED, api


def test_cluster_and_topics_without_an_authorizer_report_every_operation(open_broker: ThreadBroker) -> None:
    with WireClient(open_broker.bootstrap) as client:
        cluster = client.request(60, 1, include_cluster_authorized_operations=True, endpoint_type=1)
        assert cluster.authorized_operations == CLUSTER_OPS
        unasked = client.request(60, 1, include_cluster_authorized_operations=False, endpoint_type=1)
        assert unasked.authorized_operations is None
        topics = client.request(
            75, 0, topics=[dict(name="t"), dict(name="nope")], response_partition_limit=100, cursor=None
        )
        # Every topic it may describe, known or not.
        assert {(t.name, t.error_code, t.topic_authorized_operations) for t in topics.topics} == {
            ("t", 0, as_bits(TOPIC_OPS)),
            ("nope", 3, as_bits(TOPIC_OPS)),
        }


def test_with_an_authorizer_the_principal_s_operations(secured: AclBroker) -> None:
    create_topic(secured, "open")
    grant(secured, ResourceType.TOPIC, "open", AclOperation.READ, principal=ANON)
    grant(secured, ResourceType.GROUP, "g", AclOperation.READ, principal=ANON)
    grant(secured, ResourceType.GROUP, "g", AclOperation.ALTER_CONFIGS, principal=ANON)
    grant(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE, principal=ANON)
    with WireClient(secured.plaintext) as client:
        [g] = client.request(15, 5, groups=["g"], include_authorized_operations=True).groups
        # READ implies DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS.
        assert (g.error_code, g.authorized_operations) == (
            0,
            {READ, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS},
        )
        # Without DESCRIBE on the cluster Kafka reports no cluster operation at all.
        cluster = client.request(60, 1, include_cluster_authorized_operations=True, endpoint_type=1)
        assert cluster.authorized_operations == set()
        topics = client.request(75, 0, topics=[dict(name="open")], response_partition_limit=100, cursor=None)
        assert [(t.error_code, t.topic_authorized_operations) for t in topics.topics] == [
            (0, as_bits({READ, DESCRIBE}))
        ]
        grant(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE, principal=ANON)
        cluster = client.request(60, 1, include_cluster_authorized_operations=True, endpoint_type=1)
        assert cluster.authorized_operations == {DESCRIBE, IDEMPOTENT_WRITE}
