"""Static membership (KIP-345) in virtual time: replacement, fencing, no Stable rebalance, skipAssignment."""

from __future__ import annotations

from kafkito.broker.coordinator import GroupState, InMemoryRecordSink, LeavingMember, TopicPartition
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Harness, subscription


def static_group(h: Harness) -> tuple[str, str]:
    s1, s2 = h.stable_group(2, instances=["s1", "s2"])
    assert h.leader() == s1
    return s1, s2


def test_static_member_id_is_instance_id_plus_uuid_and_no_member_id_required() -> None:
    h = Harness()
    reply = h.join(instance="inst-7", client_id="app", version=5)
    assert not reply.done  # joined at once, no MEMBER_ID_REQUIRED round trip
    h.advance(3_000)
    assert reply.result.member_id.startswith("inst-7-")


def test_static_follower_restart_in_stable_keeps_assignment_without_rebalance() -> None:
    h = Harness()
    s1, s2 = static_group(h)
    writes = h.sink.group_writes
    restarted = h.join(instance="s2", version=8).result
    assert restarted.error is ErrorCode.NONE
    assert restarted.member_id != s2 and restarted.member_id.startswith("s2-")
    assert (restarted.generation_id, restarted.leader_id, restarted.members) == (1, s1, ())
    assert not restarted.skip_assignment
    assert h.state() is GroupState.STABLE and h.generation() == 1
    assert h.sink.group_writes == writes + 1  # the replacement is persisted
    assert h.sync("g", restarted.member_id, 1, instance="s2").result.assignment == s2.encode()
    assert h.heartbeat("g", s1, 1, "s1") is ErrorCode.NONE  # the others see no rebalance


def test_old_static_member_id_is_fenced_after_replacement() -> None:
    h = Harness()
    _, s2 = static_group(h)
    h.join(instance="s2")
    assert h.heartbeat("g", s2, 1, "s2") is ErrorCode.FENCED_INSTANCE_ID
    assert h.sync("g", s2, 1, instance="s2").result.error is ErrorCode.FENCED_INSTANCE_ID
    assert h.join(member_id=s2, instance="s2").result.error is ErrorCode.FENCED_INSTANCE_ID
    commit = h.commit("g", {TopicPartition("t", 0): 1}, member_id=s2, generation=1, instance="s2")
    assert commit.result == {TopicPartition("t", 0): ErrorCode.FENCED_INSTANCE_ID}


def test_parked_join_of_the_old_static_id_gets_fenced_instance_id() -> None:
    h = Harness()
    s1, s2 = static_group(h)
    changed = [("range", subscription("t", "x"))]
    parked = h.join(member_id=s2, instance="s2", protocols=changed)
    assert not parked.done and h.state() is GroupState.PREPARING_REBALANCE
    new = h.join(instance="s2", protocols=changed)
    assert (parked.result.error, parked.result.member_id) == (ErrorCode.FENCED_INSTANCE_ID, s2)
    assert not new.done  # the new id simply takes the old one's place in the join phase
    h.join(member_id=s1, instance="s1")
    assert (new.result.error, new.result.generation_id) == (ErrorCode.NONE, 2)
    assert h.members() == {s1, new.result.member_id}


def test_parked_sync_of_the_old_static_id_gets_fenced_and_group_rebalances() -> None:
    h = Harness()
    s1, s2 = static_group(h)
    h.join(member_id=s1, instance="s1")
    h.join(member_id=s2, instance="s2")
    assert h.state() is GroupState.COMPLETING_REBALANCE
    parked = h.sync("g", s2, 2, instance="s2")
    new = h.join(instance="s2")
    assert parked.result.error is ErrorCode.FENCED_INSTANCE_ID
    assert h.state() is GroupState.PREPARING_REBALANCE  # replaced during CompletingRebalance: start over
    assert not new.done


def test_static_leader_restart_v9_gets_skip_assignment_and_members() -> None:
    h = Harness()
    s1, s2 = static_group(h)
    result = h.join(instance="s1", version=9).result
    assert result.error is ErrorCode.NONE
    assert result.skip_assignment
    assert result.leader_id == result.member_id != s1
    assert {m.member_id for m in result.members} == {result.member_id, s2}
    assert {m.group_instance_id for m in result.members} == {"s1", "s2"}
    assert h.state() is GroupState.STABLE and h.generation() == 1


def test_static_leader_restart_before_v9_is_told_the_old_leader_id() -> None:
    h = Harness()
    s1, _ = static_group(h)
    result = h.join(instance="s1", version=8).result
    assert (result.error, result.leader_id, result.members, result.skip_assignment) == (
        ErrorCode.NONE,
        s1,
        (),
        False,
    )
    assert h.leader() == result.member_id  # leadership moved to the new id all the same
    assert h.state() is GroupState.STABLE


def test_static_restart_whose_vote_changes_the_protocol_rebalances() -> None:
    h = Harness()
    h.stable_group(1, instances=["s1"], protocols=[("range", b""), ("roundrobin", b"")])
    reply = h.join(instance="s1", protocols=[("roundrobin", b""), ("range", b"")])
    # The only member rejoined, so the rebalance it caused completes at once.
    assert (reply.result.generation_id, reply.result.protocol_name) == (2, "roundrobin")
    assert h.state() is GroupState.COMPLETING_REBALANCE


def test_failed_store_reverts_the_static_replacement() -> None:
    store = InMemoryRecordSink()
    h = Harness(sink=store)
    _, s2 = static_group(h)
    store.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    result = h.join(instance="s2").result
    assert (result.error, result.member_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, "")
    assert s2 in h.members()
    assert h.heartbeat("g", s2, 1, "s2") is ErrorCode.NONE


def test_static_restart_during_preparing_rebalance_takes_the_old_members_place() -> None:
    h = Harness()
    s1, _s2 = static_group(h)
    h.join(member_id=s1, instance="s1")
    new = h.join(instance="s2")  # replaces s2, and now everyone has joined
    assert (new.result.error, new.result.generation_id) == (ErrorCode.NONE, 2)
    assert h.members() == {s1, new.result.member_id}


def test_unknown_instance_id_with_a_member_id_is_unknown_member_id() -> None:
    h = Harness()
    s1, _ = static_group(h)
    assert h.join(member_id=s1, instance="other").result.error is ErrorCode.UNKNOWN_MEMBER_ID


def test_admin_leave_by_instance_id_removes_the_static_member() -> None:
    h = Harness()
    s1, _s2 = static_group(h)
    result = h.leave("g", LeavingMember("", "s2"), LeavingMember("", "nobody"))
    assert result.error is ErrorCode.NONE
    assert [m.error for m in result.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert h.members() == {s1}
    assert h.state() is GroupState.PREPARING_REBALANCE
