"""LeaveGroup in virtual time: single and batch leaves, pending ids, missing and Dead groups."""

from __future__ import annotations

from kafkito.broker.coordinator import GroupState, LeavingMember
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Harness


def test_leave_of_a_stable_member_rebalances_the_rest() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    result = h.leave("g", LeavingMember(follower, reason="shutting down"))
    assert (result.error, [m.error for m in result.members]) == (ErrorCode.NONE, [ErrorCode.NONE])
    assert h.members() == {leader}
    assert h.state() is GroupState.PREPARING_REBALANCE
    rejoin = h.join(member_id=leader)
    assert rejoin.result.generation_id == 2 and len(rejoin.result.members) == 1


def test_batch_leave_reports_each_member() -> None:
    h = Harness()
    a, b, c = h.stable_group(3)
    result = h.leave("g", LeavingMember(b), LeavingMember("ghost"), LeavingMember(c))
    assert [m.error for m in result.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE]
    assert [m.member_id for m in result.members] == [b, "ghost", c]
    assert h.members() == {a}


def test_leave_of_the_leader_elects_another_member() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.leave("g", LeavingMember(leader))
    assert h.leader() == follower


def test_leave_of_a_member_parked_in_join_answers_its_join() -> None:
    h = Harness()
    leader, _follower = h.stable_group(2)
    parked = h.join(member_id=leader)
    h.leave("g", LeavingMember(leader))
    assert parked.result.error is ErrorCode.UNKNOWN_MEMBER_ID


def test_leave_from_a_missing_group_is_none_with_unknown_member_per_member() -> None:
    result = Harness().leave("nope", LeavingMember("a"), LeavingMember("b"))
    assert result.error is ErrorCode.NONE
    assert [m.error for m in result.members] == [ErrorCode.UNKNOWN_MEMBER_ID] * 2


def test_leave_of_a_pending_member_drops_it_and_unblocks_the_join() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    pending = h.join(client_id="hesitant").result.member_id
    rejoins = [h.join(member_id=m) for m in (leader, follower)]
    assert not any(r.done for r in rejoins)
    result = h.leave("g", LeavingMember(pending))
    assert result.members[0].error is ErrorCode.NONE
    assert all(r.result.error is ErrorCode.NONE for r in rejoins)


def test_leave_of_the_last_member_empties_the_group() -> None:
    h = Harness()
    (only,) = h.stable_group(1)
    h.leave("g", LeavingMember(only))
    assert h.state() is GroupState.EMPTY
    assert h.members() == set()


def test_leave_with_a_fenced_instance_id_is_rejected() -> None:
    h = Harness()
    (s1,) = h.stable_group(1, instances=["s1"])
    result = h.leave("g", LeavingMember("someone-else", "s1"))
    assert result.members[0].error is ErrorCode.FENCED_INSTANCE_ID
    assert h.members() == {s1}


def test_leave_with_empty_group_id_is_invalid_group_id() -> None:
    assert Harness().leave("", LeavingMember("a")).error is ErrorCode.INVALID_GROUP_ID
