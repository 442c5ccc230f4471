"""Share groups in virtual time: joins, the simple assignment, epochs, leaves and session timeouts."""

from __future__ import annotations

from kafkito.broker.coordinator.share.config import ShareConfig
from kafkito.broker.coordinator.share.group import ShareGroupState
from kafkito.protocol.errors import ErrorCode
from tests.share_groups.harness import Harness, request


def _partitions(assignment: object) -> dict[object, tuple[int, ...]]:
    assert isinstance(assignment, tuple)
    return dict(assignment)


def test_first_member_gets_every_partition_at_epoch_one() -> None:
    h = Harness()
    topic = h.topics.create("t", 3)
    result = h.heartbeat(request("g", "m1", 0, ["t"]))
    assert result.error is ErrorCode.NONE
    assert (result.member_id, result.member_epoch, result.heartbeat_interval_ms) == ("m1", 1, 5000)
    assert result.assignment == ((topic.topic_id, (0, 1, 2)),)
    group = h.coordinator.get_share_group("g")
    assert group is not None and group.state is ShareGroupState.STABLE
    assert (group.group_epoch, group.assignment_epoch) == (1, 1)


def test_second_member_shares_partitions_and_first_catches_up_without_revocation() -> None:
    h = Harness()
    topic = h.topics.create("t", 4)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    second = h.heartbeat(request("g", "m2", 0, ["t"]))
    assert second.member_epoch == 2
    assert second.assignment == ((topic.topic_id, (1, 3)),)
    # m1 is still at epoch 1 with every partition until it heartbeats: no revocation step.
    first = h.heartbeat(request("g", "m1", 1))
    assert (first.member_epoch, first.assignment) == (2, ((topic.topic_id, (0, 2)),))
    steady = h.heartbeat(request("g", "m1", 2))
    assert (steady.member_epoch, steady.assignment) == (2, None)


def test_more_members_than_partitions_share_each_partition() -> None:
    h = Harness()
    topic = h.topics.create("t", 1)
    answers = [h.heartbeat(request("g", f"m{i}", 0, ["t"])) for i in range(3)]
    assert all(a.assignment == ((topic.topic_id, (0,)),) for a in answers)


def test_epoch_checks_and_unknown_member() -> None:
    h = Harness()
    h.topics.create("t", 1)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    ahead = h.heartbeat(request("g", "m1", 5))
    assert ahead.error is ErrorCode.FENCED_MEMBER_EPOCH and "greater member epoch" in (
        ahead.error_message or ""
    )
    h.heartbeat(request("g", "m2", 0, ["t"]))
    h.heartbeat(request("g", "m1", 1))  # m1 now at 2
    behind = h.heartbeat(request("g", "m1", 1))
    assert behind.error is ErrorCode.FENCED_MEMBER_EPOCH and "smaller member epoch" in (
        behind.error_message or ""
    )
    unknown = h.heartbeat(request("g", "nobody", 1))
    assert unknown.error is ErrorCode.UNKNOWN_MEMBER_ID
    assert unknown.error_message == "Member nobody is not a member of group g."
    missing = h.heartbeat(request("nope", "m1", 3))
    assert missing.error is ErrorCode.GROUP_ID_NOT_FOUND


def test_invalid_requests() -> None:
    h = Harness()
    cases = {
        request("", "m", 0, ["t"]): "GroupId can't be empty.",
        request("g", "", 0, ["t"]): "MemberId can't be empty.",
        request("g", "m", 0, None): "SubscribedTopicNames must be set in first request.",
        request("g", "m", 0, []): "SubscribedTopicNames must be set in first request.",
        request("g", "m", -2): "MemberEpoch is -2, but must be greater than or equal to -1.",
        request("g", "m", 0, ["t"], rack_id=""): "RackId can't be empty.",
    }
    for req, message in cases.items():
        result = h.heartbeat(req)
        assert (result.error, result.error_message) == (ErrorCode.INVALID_REQUEST, message)
    assert h.coordinator.get_share_group("g") is None


def test_leave_bumps_the_epoch_and_reassigns() -> None:
    h = Harness()
    topic = h.topics.create("t", 2)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    h.heartbeat(request("g", "m2", 0, ["t"]))
    left = h.heartbeat(request("g", "m2", -1))
    assert (left.error, left.member_id, left.member_epoch) == (ErrorCode.NONE, "m2", -1)
    group = h.coordinator.get_share_group("g")
    assert group is not None and set(group.members) == {"m1"} and group.group_epoch == 3
    # m1 never heartbeated at epoch 2, so it still holds both partitions: only its epoch moves.
    again = h.heartbeat(request("g", "m1", 1))
    assert (again.member_epoch, again.assignment) == (3, None)
    assert group.members["m1"].assigned == ((topic.topic_id, (0, 1)),)
    assert h.heartbeat(request("g", "m2", -1)).error is ErrorCode.UNKNOWN_MEMBER_ID
    h.heartbeat(request("g", "m1", -1))
    assert group.state is ShareGroupState.EMPTY


def test_session_timeout_fences_a_silent_member() -> None:
    h = Harness()
    h.topics.create("t", 2)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    h.heartbeat(request("g", "m2", 0, ["t"]))
    for _ in range(4):
        h.advance(20_000)
        epoch = h.coordinator.share_group_member_epoch("g", "m1")
        assert epoch is not None
        assert h.heartbeat(request("g", "m1", epoch)).error is ErrorCode.NONE
    assert h.coordinator.share_group_member_epoch("g", "m2") is None
    group = h.coordinator.get_share_group("g")
    assert group is not None and set(group.members) == {"m1"}


def test_session_timeout_follows_the_config() -> None:
    h = Harness(ShareConfig(group_share_session_timeout_ms=50_000, group_share_max_session_timeout_ms=60_000))
    h.topics.create("t", 1)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    h.advance(49_999)
    assert h.coordinator.share_group_member_epoch("g", "m1") == 1
    h.advance(1)
    assert h.coordinator.share_group_member_epoch("g", "m1") is None


def test_max_size() -> None:
    h = Harness(ShareConfig(group_share_max_size=2))
    h.topics.create("t", 1)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    h.heartbeat(request("g", "m2", 0, ["t"]))
    full = h.heartbeat(request("g", "m3", 0, ["t"]))
    assert full.error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert full.error_message == "The share group has reached its maximum capacity of 2 members."
    # A member already in the group may rejoin.
    assert h.heartbeat(request("g", "m1", 0, ["t"])).error is ErrorCode.NONE


def test_topic_created_later_bumps_the_epoch() -> None:
    h = Harness()
    first = h.heartbeat(request("g", "m1", 0, ["later"]))
    assert (first.member_epoch, first.assignment) == (1, ())
    topic = h.topics.create("later", 2)
    h.coordinator.on_topics_changed()
    result = h.heartbeat(request("g", "m1", 1))
    assert (result.member_epoch, result.assignment) == (2, ((topic.topic_id, (0, 1)),))


def test_subscription_change() -> None:
    h = Harness()
    a = h.topics.create("a", 1)
    b = h.topics.create("b", 1)
    h.heartbeat(request("g", "m1", 0, ["a"]))
    result = h.heartbeat(request("g", "m1", 1, ["a", "b"]))
    assert result.member_epoch == 2
    assert _partitions(result.assignment) == {a.topic_id: (0,), b.topic_id: (0,)}


def test_assigned_partitions_are_initialized_once_at_latest() -> None:
    h = Harness()
    topic = h.topics.create("t", 2)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    h.heartbeat(request("g", "m2", 0, ["t"]))
    assert h.persister.offsets == {("g", topic.topic_id, 0): 10, ("g", topic.topic_id, 1): 10}
    group = h.coordinator.get_share_group("g")
    assert group is not None and group.initialized == {topic.topic_id: ("t", frozenset({0, 1}))}
    assert group.initializing == {}


def test_auto_offset_reset_earliest() -> None:
    h = Harness()
    topic = h.topics.create("t", 1)
    h.coordinator.share_group_configs.set("g", "share.auto.offset.reset", "earliest")
    h.heartbeat(request("g", "m1", 0, ["t"]))
    assert h.persister.offsets == {("g", topic.topic_id, 0): 0}


def test_a_deleted_topic_leaves_the_assignment_and_the_share_state() -> None:
    h = Harness()
    a = h.topics.create("a", 1)
    b = h.topics.create("b", 1)
    h.heartbeat(request("g", "m1", 0, ["a", "b"]))
    assert set(h.persister.offsets) == {("g", a.topic_id, 0), ("g", b.topic_id, 0)}
    h.topics.delete("b")
    h.coordinator.on_topics_changed()
    assert set(h.persister.offsets) == {("g", a.topic_id, 0)}
    group = h.coordinator.get_share_group("g")
    assert group is not None and set(group.initialized) == {a.topic_id}
    result = h.heartbeat(request("g", "m1", 1))
    assert (result.member_epoch, result.assignment) == (2, ((a.topic_id, (0,)),))


def test_delete_groups_forgets_the_share_state() -> None:
    h = Harness()
    topic = h.topics.create("t", 2)
    h.heartbeat(request("g", "m1", 0, ["t"]))
    assert h.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NON_EMPTY_GROUP}
    h.heartbeat(request("g", "m1", -1))
    assert len(h.persister.offsets) == 2 and topic.num_partitions == 2
    assert h.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NONE}
    assert h.persister.offsets == {} and h.coordinator.get_share_group("g") is None
    assert h.restart().get_share_group("g") is None
