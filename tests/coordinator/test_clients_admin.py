"""Admin clients list, describe and delete groups as they would against Kafka."""

from __future__ import annotations

import pytest

from tests.coordinator.clients import ConfluentMember, create_topic, group_state, wait_for_members
from tests.support.brokers import ThreadBroker


@pytest.fixture
def groups(broker: ThreadBroker):  # type: ignore[no-untyped-def]
    """A live group `busy` (one consumer) and an Empty group `idle` (its consumer left)."""
    create_topic(broker.bootstrap, "adm", 2)
    busy = ConfluentMember(broker.bootstrap, "adm", "busy", "busy-consumer")
    idle = ConfluentMember(broker.bootstrap, "adm", "idle", "idle-consumer")
    wait_for_members(
        [busy, idle],
        lambda: len(busy.assignment()) == 2 and len(idle.assignment()) == 2,
        "both groups stable",
    )
    idle.close()  # LeaveGroup: the group becomes Empty
    wait_for_members([busy], lambda: group_state(broker, "idle")[0] == "Empty", "idle to empty")
    yield busy
    busy.close()


def test_confluent_admin_lists_describes_and_deletes_groups(
    broker: ThreadBroker, groups: ConfluentMember
) -> None:
    from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups(request_timeout=10).result()
    states = {g.group_id: g.state for g in listed.valid}
    assert states == {"busy": ConsumerGroupState.STABLE, "idle": ConsumerGroupState.EMPTY}
    assert all(not g.is_simple_consumer_group for g in listed.valid)
    stable_only = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result()
    assert [g.group_id for g in stable_only.valid] == ["busy"]

    described = admin.describe_consumer_groups(["busy"])["busy"].result()
    assert (described.state, described.partition_assignor) == (ConsumerGroupState.STABLE, "range")
    (member,) = described.members
    assert member.client_id == "busy-consumer"
    assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1]

    futures = admin.delete_consumer_groups(["busy", "idle", "never-was"], request_timeout=10)
    with pytest.raises(KafkaException) as non_empty:
        futures["busy"].result()
    assert non_empty.value.args[0].code() == KafkaError.NON_EMPTY_GROUP
    assert futures["idle"].result() is None
    with pytest.raises(KafkaException) as not_found:
        futures["never-was"].result()
    assert not_found.value.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND
    assert group_state(broker, "idle")[0] == "Dead"


def test_kafka_python_admin_lists_describes_and_deletes_groups(
    broker: ThreadBroker, groups: ConfluentMember
) -> None:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert set(listed) == {"busy", "idle"}
        assert {g["protocol_type"] for g in listed.values()} == {"consumer"}
        stable = admin.list_groups(states_filter=["Stable"])
        assert [g["group_id"] for g in stable] == ["busy"]

        described = admin.describe_groups(["busy", "unknown"])
        assert (described["busy"]["group_state"], described["busy"]["protocol_data"]) == ("Stable", "range")
        assert len(described["busy"]["members"]) == 1
        # DescribeGroups v6 (Kafka 4, KIP-1043): an unknown group is GROUP_ID_NOT_FOUND, with its message.
        unknown = described["unknown"]
        assert (unknown["group_state"], unknown["error"]) == (
            "Dead", "[Error 69] GroupIdNotFoundError: Group unknown not found."
        )  # fmt: skip

        deleted = admin.delete_groups(["busy", "idle", "never-was"])
        assert deleted == {"busy": "NonEmptyGroupError", "idle": "OK", "never-was": "GroupIdNotFoundError"}
    finally:
        admin.close()


def test_kafka_python_admin_removes_a_static_member_by_instance_id(broker: ThreadBroker) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import MemberToRemove

    create_topic(broker.bootstrap, "adm-static", 2)
    member = ConfluentMember(
        broker.bootstrap, "adm-static", "static-admin", "s", **{"group.instance.id": "inst-s"}
    )
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        wait_for_members([member], lambda: len(member.assignment()) == 2, "the static member assigned")
        admin.remove_group_members("static-admin", [MemberToRemove(group_instance_id="inst-s")])
        _state, _, ids = group_state(broker, "static-admin")
        assert ids == []
    finally:
        admin.close()
        member.close()
