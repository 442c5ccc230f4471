"""ConsumerGroupDescribe (69), DescribeGroups (15) and ListGroups (16) as raw requests over TCP, for
KIP-848 consumer groups beside classic ones, at every version."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

# READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (Kafka 4)
GROUP_OPERATIONS_BITS = sum(1 << op for op in (3, 6, 8, 10, 11))
OMITTED = -(2**31)


def join(client: WireClient, group: str, topics: list[str], member_id: str, **extra: Any) -> Any:
    fields: dict[str, Any] = dict(
        group_id=group,
        member_id=member_id,
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=topics,
        subscribed_topic_regex=None,
        server_assignor=None,
        topic_partitions=[],
    )
    fields.update(extra)
    response = client.request(68, 1, **fields)
    assert response.error_code == ErrorCode.NONE, response.error_message
    return response


def ack(client: WireClient, group: str, member_id: str, epoch: int, owned: list[dict[str, Any]]) -> Any:
    """A heartbeat reporting `owned` as the member's partitions."""
    return client.request(
        68, 1, group_id=group, member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
        rebalance_timeout_ms=-1, subscribed_topic_names=None, subscribed_topic_regex=None,
        server_assignor=None, topic_partitions=owned,
    )  # fmt: skip


def classic_group(broker: ThreadBroker, group: str) -> None:
    """A classic group with committed offsets and no members (Empty), made by an OffsetCommit."""
    with WireClient(broker.bootstrap) as client:
        client.request(
            19,
            5,
            topics=[
                dict(
                    name="describe-topic", num_partitions=4, replication_factor=1, assignments=[], configs=[]
                )
            ],
            timeout_ms=10_000,
            validate_only=False,
        )
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            8, 2, group_id=group, generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
            topics=[dict(name="describe-topic", partitions=[
                dict(partition_index=0, committed_offset=0, committed_metadata=None)])],
        )  # fmt: skip
        assert response.topics[0].partitions[0].error_code == ErrorCode.NONE


@pytest.fixture
def consumer_group(broker: ThreadBroker) -> tuple[str, str, uuid.UUID]:
    """A stable consumer group of one member owning all 4 partitions of describe-topic."""
    create_topic(broker.bootstrap, "describe-topic", 4)
    member_id = str(uuid.uuid4())
    with WireClient(broker.bootstrap, client_id="describer") as client:
        joined = join(client, "cg", ["describe-topic"], member_id, rack_id="rack-a")
        owned = [
            dict(topic_id=t.topic_id, partitions=list(t.partitions))
            for t in joined.assignment.topic_partitions
        ]
        ack(client, "cg", member_id, joined.member_epoch, owned)
        topic_id = joined.assignment.topic_partitions[0].topic_id
    return "cg", member_id, topic_id


@pytest.mark.parametrize("version", [0, 1])
def test_consumer_group_described(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID], version: int
) -> None:
    group, member_id, topic_id = consumer_group
    with WireClient(broker.bootstrap) as client:
        response = client.request(69, version, group_ids=[group], include_authorized_operations=True)
    (described,) = response.groups
    assert described.error_code == ErrorCode.NONE
    assert described.error_message is None
    assert described.group_id == group
    assert described.group_state.lower() == "stable"
    assert described.group_epoch >= 1
    assert described.assignment_epoch == described.group_epoch
    assert described.assignor_name == "uniform"
    assert described.authorized_operations == GROUP_OPERATIONS_BITS
    (member,) = described.members
    assert member.member_id == member_id
    assert member.instance_id is None
    assert member.rack_id == "rack-a"
    assert member.member_epoch == described.group_epoch
    assert member.client_id == "describer"
    assert member.client_host == "/127.0.0.1"
    assert list(member.subscribed_topic_names) == ["describe-topic"]
    assert member.subscribed_topic_regex == ""  # as Kafka 4.4 reports a member without a regex
    for assignment in (member.assignment, member.target_assignment):
        (topic,) = assignment.topic_partitions
        assert (topic.topic_id, topic.topic_name, sorted(topic.partitions)) == (
            topic_id, "describe-topic", [0, 1, 2, 3],
        )  # fmt: skip
    if version >= 1:
        assert member.member_type == 1


def test_authorized_operations_left_out_unless_asked(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID]
) -> None:
    with WireClient(broker.bootstrap) as client:
        response = client.request(69, 1, group_ids=[consumer_group[0]], include_authorized_operations=False)
    assert response.groups[0].authorized_operations == OMITTED


@pytest.mark.parametrize("version", [0, 1])
def test_unknown_and_classic_groups_are_not_found(broker: ThreadBroker, version: int) -> None:
    classic_group(broker, "classic-one")
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            69, version, group_ids=["nobody", "classic-one"], include_authorized_operations=True
        )
    by_id = {g.group_id: g for g in response.groups}
    assert set(by_id) == {"nobody", "classic-one"}
    for group in by_id.values():  # only the id, the error and its message; every other field at its default
        assert group.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert group.error_message
        assert (group.group_state, group.group_epoch, group.assignment_epoch, group.assignor_name) == (
            "",
            0,
            0,
            "",
        )
        assert group.members == []
        assert group.authorized_operations == OMITTED
    assert by_id["classic-one"].error_message == "Group classic-one is not a consumer group."


@pytest.mark.parametrize("version", [0, 1])
def test_an_empty_group_id_is_invalid(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID], version: int
) -> None:
    with WireClient(broker.bootstrap) as client:
        response = client.request(69, version, group_ids=["", "cg"], include_authorized_operations=False)
    empty, described = response.groups
    assert (empty.group_id, empty.error_code, empty.error_message) == ("", ErrorCode.INVALID_GROUP_ID, None)
    assert (described.group_id, described.error_code) == ("cg", ErrorCode.NONE)


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_before_v6_shows_a_consumer_group_dead(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID], version: int
) -> None:
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            15, version, groups=[consumer_group[0], "nobody"], include_authorized_operations=False
        )
    for described in response.groups:
        assert described.error_code == ErrorCode.NONE
        assert described.group_state == "Dead"
        assert described.protocol_type == ""
        assert described.members == []


def test_describe_groups_v6_says_why(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID]
) -> None:
    classic_group(broker, "classic-two")
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            15, 6, groups=[consumer_group[0], "nobody", "classic-two"], include_authorized_operations=False
        )
    by_id = {g.group_id: g for g in response.groups}
    assert by_id["cg"].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert by_id["cg"].error_message == "Group cg is not a classic group."
    assert by_id["cg"].group_state == "Dead"
    assert by_id["nobody"].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert by_id["nobody"].error_message == "Group nobody not found."
    assert by_id["classic-two"].error_code == ErrorCode.NONE
    assert by_id["classic-two"].error_message is None
    assert by_id["classic-two"].group_state == "Empty"


def test_list_groups_v5_types(broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID]) -> None:
    classic_group(broker, "classic-three")
    with WireClient(broker.bootstrap) as client:

        def listed(types: list[str]) -> dict[str, Any]:
            response = client.request(16, 5, states_filter=[], types_filter=types)
            assert response.error_code == ErrorCode.NONE
            return {g.group_id: g for g in response.groups}

        everything = listed([])
        assert everything["cg"].group_type == "consumer"
        assert everything["cg"].protocol_type == "consumer"
        assert everything["cg"].group_state.lower() == "stable"
        assert everything["classic-three"].group_type == "classic"
        assert set(listed(["consumer"])) == {"cg"}
        assert set(listed(["CONSUMER"])) == {"cg"}
        assert "cg" not in listed(["classic"])
        assert "classic-three" in listed(["classic"])
        assert listed(["share"]) == {}
        for version in range(0, 5):
            groups = {g.group_id: g for g in client.request(16, version).groups}
            assert groups["cg"].protocol_type == "consumer"


def test_consumer_group_empties_after_its_member_leaves(
    broker: ThreadBroker, consumer_group: tuple[str, str, uuid.UUID]
) -> None:
    group, member_id, _ = consumer_group
    with WireClient(broker.bootstrap) as client:
        left = client.request(
            68, 1, group_id=group, member_id=member_id, member_epoch=-1, instance_id=None, rack_id=None,
            rebalance_timeout_ms=-1, subscribed_topic_names=None, subscribed_topic_regex=None,
            server_assignor=None, topic_partitions=None,
        )  # fmt: skip
        assert left.error_code == ErrorCode.NONE

        def described() -> Any:
            return client.request(69, 1, group_ids=[group], include_authorized_operations=False).groups[0]

        wait_until(lambda: described().group_state.lower() == "empty", 10, "the group to be empty")
        assert described().members == []
