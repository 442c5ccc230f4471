"""ConsumerGroupHeartbeat (68) as raw requests over TCP: the checks the handler makes before the group
is touched (INVALID_REQUEST with Kafka's messages), at every version, and a join/leave round trip."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

HEARTBEAT = 68
VERSIONS = [0, 1]


def heartbeat(version: int, **overrides: Any) -> dict[str, Any]:
    """A valid first heartbeat (joining) of `version`, with `overrides`."""
    fields: dict[str, Any] = dict(
        group_id="wire-group",
        member_id=str(uuid.uuid4()),
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["wire-topic"],
        server_assignor=None,
        topic_partitions=[],
    )
    if version >= 1:
        fields["subscribed_topic_regex"] = None
    fields.update(overrides)
    return fields


def send(broker: ThreadBroker, version: int, **fields: Any) -> Any:
    with WireClient(broker.bootstrap) as client:
        return client.request(HEARTBEAT, version, **fields)


INVALID = [
    ("empty group id", dict(group_id=""), "GroupId can't be empty."),
    ("empty instance id", dict(instance_id=""), "InstanceId can't be empty."),
    ("empty rack id", dict(rack_id=""), "RackId can't be empty."),
    ("no rebalance timeout", dict(rebalance_timeout_ms=-1),
     "RebalanceTimeoutMs must be provided in first request."),
    ("owned partitions on join", dict(topic_partitions=[dict(topic_id=uuid.uuid4(), partitions=[0])]),
     "TopicPartitions must be empty when (re-)joining."),
    ("null owned partitions on join", dict(topic_partitions=None),
     "TopicPartitions must be empty when (re-)joining."),
    ("no subscription on join", dict(subscribed_topic_names=None),
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    ("static leave without instance id", dict(member_epoch=-2), "InstanceId can't be null."),
    ("epoch below -2", dict(member_epoch=-3), "MemberEpoch is invalid."),
    ("empty member id heartbeating", dict(member_id="", member_epoch=4), "MemberId can't be empty."),
    ("empty member id leaving", dict(member_id="", member_epoch=-1), "MemberId can't be empty."),
]  # fmt: skip


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("case", "overrides", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_heartbeats_are_refused_before_the_group(
    broker: ThreadBroker, version: int, case: str, overrides: dict[str, Any], message: str
) -> None:
    response = send(broker, version, **heartbeat(version, **overrides))
    assert response.error_code == ErrorCode.INVALID_REQUEST, case
    assert response.error_message == message
    assert response.member_id is None
    assert response.member_epoch == 0
    assert response.heartbeat_interval_ms == 0
    assert response.assignment is None
    # Nothing was created for the refused member.
    with WireClient(broker.bootstrap) as client:
        described = client.request(69, 0, group_ids=["wire-group"], include_authorized_operations=False)
    assert described.groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_v0_joins_with_an_empty_member_id_but_v1_must_bring_one(broker: ThreadBroker) -> None:
    """KIP-1082: from v1 on the client generates its member id; v0 lets the coordinator choose it."""
    create_topic(broker.bootstrap, "wire-topic", 2)
    refused = send(broker, 1, **heartbeat(1, member_id=""))
    assert refused.error_code == ErrorCode.INVALID_REQUEST
    assert refused.error_message == "MemberId can't be empty."
    joined = send(broker, 0, **heartbeat(0, member_id=""))
    assert joined.error_code == ErrorCode.NONE, joined.error_message
    assert joined.member_id
    assert joined.member_epoch >= 1


def test_v1_regex_with_empty_names_is_a_valid_join(broker: ThreadBroker) -> None:
    """librdkafka joins with names and an empty regex: both are a subscription, and the join is valid."""
    create_topic(broker.bootstrap, "wire-topic", 2)
    response = send(broker, 1, **heartbeat(1, subscribed_topic_regex=""))
    assert response.error_code == ErrorCode.NONE, response.error_message


@pytest.mark.parametrize("version", VERSIONS)
def test_join_then_leave_round_trip(broker: ThreadBroker, version: int) -> None:
    create_topic(broker.bootstrap, "wire-topic", 3)
    member_id = str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        joined = client.request(HEARTBEAT, version, **heartbeat(version, member_id=member_id))
        assert joined.error_code == ErrorCode.NONE, joined.error_message
        assert joined.member_id == member_id
        assert joined.member_epoch >= 1
        assert joined.heartbeat_interval_ms > 0
        assert joined.assignment is not None
        partitions = {p for t in joined.assignment.topic_partitions for p in t.partitions}
        assert partitions == {0, 1, 2}
        left = client.request(
            HEARTBEAT,
            version,
            **heartbeat(version, member_id=member_id, member_epoch=-1, rebalance_timeout_ms=-1,
                        subscribed_topic_names=None, topic_partitions=None),
        )  # fmt: skip
        assert left.error_code == ErrorCode.NONE, left.error_message
        assert left.member_id == member_id
        assert left.member_epoch == -1


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_member_heartbeating_is_refused(broker: ThreadBroker, version: int) -> None:
    create_topic(broker.bootstrap, "wire-topic", 1)
    response = send(
        broker,
        version,
        **heartbeat(version, member_epoch=5, rebalance_timeout_ms=-1, subscribed_topic_names=None,
                    topic_partitions=None),
    )  # fmt: skip
    assert response.error_code == ErrorCode.UNKNOWN_MEMBER_ID, response.error_message


@pytest.mark.parametrize("version", VERSIONS)
def test_fenced_epoch_is_refused(broker: ThreadBroker, version: int) -> None:
    create_topic(broker.bootstrap, "wire-topic", 1)
    member_id = str(uuid.uuid4())
    joined = send(broker, version, **heartbeat(version, member_id=member_id))
    assert joined.error_code == ErrorCode.NONE
    response = send(
        broker,
        version,
        **heartbeat(version, member_id=member_id, member_epoch=joined.member_epoch + 10,
                    rebalance_timeout_ms=-1, subscribed_topic_names=None, topic_partitions=None),
    )  # fmt: skip
    assert response.error_code == ErrorCode.FENCED_MEMBER_EPOCH, response.error_message


@pytest.mark.parametrize("version", VERSIONS)
def test_unsupported_assignor_is_refused(broker: ThreadBroker, version: int) -> None:
    response = send(broker, version, **heartbeat(version, server_assignor="no-such-assignor"))
    assert response.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert response.error_message and "no-such-assignor" in response.error_message


def test_invalid_regex_is_refused(broker: ThreadBroker) -> None:
    response = send(
        broker, 1, **heartbeat(1, subscribed_topic_names=None, subscribed_topic_regex="(unclosed")
    )
    assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION, response.error_message


def test_null_group_id_closes_the_connection(broker: ThreadBroker) -> None:
    """GroupId is not nullable: Kafka fails to parse such a request and closes the connection."""
    with WireClient(broker.bootstrap) as client:
        client.send(HEARTBEAT, 1, **heartbeat(1, group_id=None))
        assert client.recv_frame() is None


@pytest.mark.parametrize("version", VERSIONS)
def test_a_full_group_refuses_one_more_member(
    broker_factory: Callable[..., ThreadBroker], version: int
) -> None:
    broker = broker_factory(group_consumer_max_size=1)
    create_topic(broker.bootstrap, "wire-topic", 1)
    assert send(broker, version, **heartbeat(version)).error_code == ErrorCode.NONE
    response = send(broker, version, **heartbeat(version))
    assert response.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED, response.error_message


@pytest.mark.parametrize("version", VERSIONS)
def test_a_static_member_cannot_take_an_instance_id_in_use(broker: ThreadBroker, version: int) -> None:
    create_topic(broker.bootstrap, "wire-topic", 1)
    first = send(broker, version, **heartbeat(version, instance_id="instance-1"))
    assert first.error_code == ErrorCode.NONE
    second = send(broker, version, **heartbeat(version, instance_id="instance-1"))
    assert second.error_code == ErrorCode.UNRELEASED_INSTANCE_ID, second.error_message
