"""Admin APIs in virtual time: DescribeGroups, ListGroups filters, DeleteGroups, OffsetDelete."""

from __future__ import annotations

from kafkito.broker.coordinator import GroupState, LeavingMember, TopicPartition
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Harness, subscription

T0 = TopicPartition("t", 0)
U0 = TopicPartition("u", 0)


def test_describe_unknown_group_is_dead_with_no_error() -> None:
    (described,) = Harness().coordinator.describe_groups(["nope"])
    assert (described.error, described.summary.state, described.summary.members) == (
        ErrorCode.NONE,
        "Dead",
        (),
    )


def test_describe_stable_group_includes_member_metadata_and_assignments() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    (described,) = h.coordinator.describe_groups(["g"])
    summary = described.summary
    assert (summary.state, summary.protocol_type, summary.protocol) == ("Stable", "consumer", "range")
    by_id = {m.member_id: m for m in summary.members}
    assert set(by_id) == {leader, follower}
    assert by_id[follower].assignment == follower.encode()
    assert by_id[follower].metadata == subscription("t")
    assert by_id[follower].client_id == "c1" and by_id[follower].client_host == "/127.0.0.1"


def test_describe_rebalancing_group_has_no_protocol_nor_member_bytes() -> None:
    h = Harness()
    leader, _ = h.stable_group(2)
    h.join(member_id=leader)
    (described,) = h.coordinator.describe_groups(["g"])
    assert (described.summary.state, described.summary.protocol) == ("PreparingRebalance", "")
    assert all(m.metadata == b"" and m.assignment == b"" for m in described.summary.members)
    assert len(described.summary.members) == 2


def test_list_groups_state_and_type_filters_are_case_insensitive() -> None:
    h = Harness()
    h.stable_group(1, group="stable-one")
    h.commit("offsets-only", {T0: 1})
    list_groups = h.coordinator.list_groups
    assert {g.group_id for g in list_groups()[1]} == {"stable-one", "offsets-only"}
    assert [g.group_id for g in list_groups(states=["stable"])[1]] == ["stable-one"]
    assert [g.group_id for g in list_groups(states=["STABLE"])[1]] == ["stable-one"]
    assert [g.group_id for g in list_groups(states=["eMpTy"])[1]] == ["offsets-only"]
    assert {g.group_id for g in list_groups(types=["CLASSIC"])[1]} == {"stable-one", "offsets-only"}
    assert list_groups(types=["consumer"]) == (ErrorCode.NONE, [])
    (overview,) = list_groups(states=["Stable"])[1]
    assert (overview.protocol_type, overview.state, overview.group_type) == ("consumer", "Stable", "classic")


def test_delete_groups_non_empty_unknown_and_empty() -> None:
    h = Harness()
    h.stable_group(1, group="busy")
    h.commit("idle", {T0: 3})
    errors = h.coordinator.delete_groups(["busy", "nope", "idle"])
    assert errors == {
        "busy": ErrorCode.NON_EMPTY_GROUP,
        "nope": ErrorCode.GROUP_ID_NOT_FOUND,
        "idle": ErrorCode.NONE,
    }
    assert h.coordinator.get_group("idle") is None
    assert h.coordinator.fetch_offsets("idle", [T0])[1][T0].offset == -1
    assert h.sink.tombstones == [("idle", (T0,), False)]  # generation 0: no group tombstone
    assert h.coordinator.delete_groups(["idle"]) == {"idle": ErrorCode.GROUP_ID_NOT_FOUND}


def test_delete_group_that_had_members_writes_a_group_tombstone() -> None:
    h = Harness()
    (only,) = h.stable_group(1)
    h.leave("g", LeavingMember(only))
    assert h.state() is GroupState.EMPTY
    assert h.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NONE}
    assert h.sink.tombstones == [("g", (), True)]


def test_offset_delete_on_a_subscribed_topic_is_group_subscribed_to_topic() -> None:
    h = Harness()
    (member,) = h.stable_group(1)  # subscribed to "t"
    h.commit("g", {T0: 1, U0: 2}, member_id=member, generation=1)
    error, results = h.coordinator.delete_offsets("g", [T0, U0])
    assert error is ErrorCode.NONE
    assert results == {T0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, U0: ErrorCode.NONE}
    fetched = h.coordinator.fetch_offsets("g", [T0, U0])[1]
    assert (fetched[T0].offset, fetched[U0].offset) == (1, -1)


def test_offset_delete_on_an_empty_group_deletes() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    assert h.coordinator.delete_offsets("g", [T0]) == (ErrorCode.NONE, {T0: ErrorCode.NONE})
    assert h.coordinator.fetch_offsets("g", [T0])[1][T0].offset == -1


def test_offset_delete_on_a_non_consumer_non_empty_group_is_non_empty_group() -> None:
    h = Harness()
    h.stable_group(1, protocol_type="connect", protocols=[("default", b"\x00")])
    assert h.coordinator.delete_offsets("g", [T0]) == (ErrorCode.NON_EMPTY_GROUP, {})


def test_offset_delete_on_unknown_group_is_group_id_not_found() -> None:
    assert Harness().coordinator.delete_offsets("nope", [T0]) == (ErrorCode.GROUP_ID_NOT_FOUND, {})


def test_unparseable_subscription_counts_as_subscribed_to_every_topic() -> None:
    h = Harness()
    (member,) = h.stable_group(1, protocols=[("range", b"\xff")])
    h.commit("g", {U0: 2}, member_id=member, generation=1)
    assert h.coordinator.delete_offsets("g", [U0]) == (
        ErrorCode.NONE,
        {U0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC},
    )
