"""JoinGroup in virtual time: member ids, pending members, initial delay, join completion, vote, leaders."""

from __future__ import annotations

import uuid

import pytest

from kafkito.broker.coordinator import CoordinatorConfig, GroupState, LeavingMember
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness, subscription


def test_v4_dynamic_join_gets_member_id_required_with_client_id_uuid_then_rejoin_works() -> None:
    h = Harness()
    first = h.join(client_id="my-app", version=4)
    result = first.result
    assert result.error is ErrorCode.MEMBER_ID_REQUIRED
    assert result.member_id.startswith("my-app-")
    suffix = result.member_id.removeprefix("my-app-")
    assert str(uuid.UUID(suffix)) == suffix
    assert h.members() == set()  # only pending so far

    second = h.join(member_id=result.member_id, client_id="my-app", version=4)
    assert not second.done
    h.advance(3_000)
    assert second.result.error is ErrorCode.NONE
    assert second.result.member_id == result.member_id
    assert second.result.generation_id == 1
    assert h.members() == {result.member_id}


def test_v3_dynamic_join_is_added_at_once_without_member_id_required() -> None:
    h = Harness()
    reply = h.join(client_id="old", version=3)
    assert not reply.done
    assert len(h.members()) == 1
    h.advance(3_000)
    assert reply.result.error is ErrorCode.NONE
    assert reply.result.member_id.startswith("old-")


def test_pending_member_blocks_join_completion_until_it_joins() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    pending_id = h.join(client_id="late").result.member_id  # MEMBER_ID_REQUIRED, now pending
    assert h.state() is GroupState.STABLE  # a pending member does not trigger a rebalance

    rejoin_leader = h.join(member_id=leader)
    rejoin_follower = h.join(member_id=follower)
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert not rejoin_leader.done and not rejoin_follower.done  # everyone joined, but one is pending

    late = h.join(member_id=pending_id, client_id="late")
    assert late.result.error is ErrorCode.NONE
    assert rejoin_leader.result.generation_id == 2
    assert h.members() == {leader, follower, pending_id}


def test_pending_member_that_never_returns_expires_after_session_timeout() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(client_id="ghost", session_ms=SESSION_MS)
    rejoin_leader = h.join(member_id=leader)
    rejoin_follower = h.join(member_id=follower)
    h.advance(SESSION_MS - 1)
    assert not rejoin_leader.done
    h.advance(1)
    assert rejoin_leader.result.error is ErrorCode.NONE
    assert rejoin_follower.result.error is ErrorCode.NONE
    assert h.members() == {leader, follower}


def test_new_group_waits_initial_delay_before_completing() -> None:
    h = Harness()
    reply = h.join(version=3, rebalance_ms=30_000)
    h.advance(2_999)
    assert not reply.done
    h.advance(1)
    assert reply.result.error is ErrorCode.NONE
    assert h.state() is GroupState.COMPLETING_REBALANCE


def test_each_newcomer_extends_initial_delay_by_min_of_delay_and_remaining() -> None:
    h = Harness()
    first = h.join(version=3, rebalance_ms=30_000)
    h.advance(1_000)
    h.join(version=3, client_id="second", rebalance_ms=30_000)
    h.advance(2_000)  # t=3000: a newcomer arrived, so wait another 3000
    assert not first.done
    h.advance(2_999)
    assert not first.done
    h.advance(1)  # t=6000: nobody new since the extension
    assert first.result.error is ErrorCode.NONE
    assert len(first.result.members) == 2


def test_initial_delay_extension_is_bounded_by_the_rebalance_timeout() -> None:
    h = Harness()
    first = h.join(version=3, rebalance_ms=5_000)  # delay 3000, remaining 2000
    h.advance(1_000)
    h.join(version=3, client_id="b", rebalance_ms=5_000)
    h.advance(2_000)  # t=3000: extended by min(3000, 2000) = 2000, nothing remains after that
    h.advance(1_000)
    h.join(version=3, client_id="c", rebalance_ms=5_000)  # no time left to extend for
    h.advance(999)
    assert not first.done
    h.advance(1)  # t=5000
    assert first.result.error is ErrorCode.NONE
    assert len(first.result.members) == 3


def test_initial_delay_never_completes_early_even_when_everyone_joined() -> None:
    h = Harness()
    reply = h.join(version=3)
    h.advance(0)
    assert not reply.done  # the only member joined, yet the initial delay holds


def test_initial_delay_zero_completes_at_once() -> None:
    h = Harness(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    reply = h.join(version=3)
    h.advance(0)
    assert reply.result.error is ErrorCode.NONE


def test_non_empty_group_completes_join_as_soon_as_everyone_rejoined() -> None:
    h = Harness()
    ids = h.stable_group(3)
    generation = h.generation()
    replies = []
    for m in ids:
        assert not any(r.done for r in replies)
        replies.append(h.join(member_id=m))
    assert all(r.result.generation_id == generation + 1 for r in replies)
    assert h.state() is GroupState.COMPLETING_REBALANCE


def test_rebalance_timeout_drops_dynamic_non_rejoiners_and_keeps_static_ones() -> None:
    h = Harness()
    leader, dyn, static = h.stable_group(3, instances=[None, None, "static-1"], rebalance_ms=5_000)
    generation = h.generation()
    rejoin = h.join(member_id=leader, rebalance_ms=5_000)
    h.advance(4_999)
    assert not rejoin.done
    h.advance(1)
    result = rejoin.result
    assert result.generation_id == generation + 1
    assert {m.member_id for m in result.members} == {leader, static}
    assert h.members() == {leader, static}
    assert dyn not in h.members()


def test_join_phase_is_rescheduled_when_no_member_rejoined_and_a_rejoiner_becomes_leader() -> None:
    h = Harness()
    s1, s2, dyn = h.stable_group(3, instances=["s1", "s2", None], rebalance_ms=5_000)
    assert h.leader() == s1
    h.leave("g", LeavingMember(dyn))
    assert h.state() is GroupState.PREPARING_REBALANCE
    h.advance(4_000)
    assert h.heartbeat("g", s1, 1, "s1") is ErrorCode.REBALANCE_IN_PROGRESS
    h.advance(1_000)  # t=5000: nobody rejoined, only static members left: wait again
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.members() == {s1, s2}
    h.advance(1_000)
    rejoin = h.join(member_id=s2, instance="s2", rebalance_ms=5_000)
    h.advance(2_000)
    assert h.heartbeat("g", s1, 1, "s1") is ErrorCode.REBALANCE_IN_PROGRESS
    assert not rejoin.done
    h.advance(2_000)  # t=10000: the rescheduled phase ends with the one member that rejoined
    result = rejoin.result
    assert (result.error, result.generation_id, result.leader_id) == (ErrorCode.NONE, 2, s2)
    assert {m.member_id for m in result.members} == {s1, s2}  # the static non-rejoiner is kept


def test_generation_increments_per_completed_join_including_one_that_ends_empty() -> None:
    h = Harness()
    (only,) = h.stable_group(1)
    assert h.generation() == 1
    writes = h.sink.group_writes
    h.join(member_id=only)  # leader rejoin: new generation
    assert h.generation() == 2
    leave = h.leave("g", LeavingMember(only))
    assert leave.members[0].error is ErrorCode.NONE
    assert h.state() is GroupState.EMPTY
    assert h.generation() == 3
    assert h.sink.group_writes == writes + 1  # the empty group record
    group = h.coordinator.get_group("g")
    assert group is not None and group.protocol_name is None


def test_only_the_leader_join_response_lists_members() -> None:
    h = Harness()
    ids = [h.join_new(client_id=f"c{i}", protocols=[("range", f"meta{i}".encode())]) for i in range(3)]
    h.advance(6_000)
    results = {member_id: reply.result for member_id, reply in ids}
    leaders = {r.leader_id for r in results.values()}
    assert len(leaders) == 1
    (leader,) = leaders
    for member_id, result in results.items():
        if member_id == leader:
            assert {m.member_id: m.metadata for m in result.members} == {
                m: f"meta{i}".encode() for i, (m, _) in enumerate(ids)
            }
        else:
            assert result.members == ()


def test_protocol_vote_picks_the_most_preferred_common_protocol() -> None:
    h = Harness()
    prefs = [
        [("range", b""), ("roundrobin", b""), ("sticky", b"")],
        [("roundrobin", b""), ("range", b"")],
        [("roundrobin", b""), ("range", b""), ("sticky", b"")],
    ]
    replies = [h.join_new(client_id=f"c{i}", protocols=p)[1] for i, p in enumerate(prefs)]
    h.advance(6_000)
    assert {r.result.protocol_name for r in replies} == {"roundrobin"}
    assert {r.result.protocol_type for r in replies} == {"consumer"}


def test_a_protocol_named_twice_by_a_member_counts_once() -> None:
    # A JoinGroup naming "range" twice (a fuzzed frame did): the group still has a common protocol
    # when the join completes, rather than a timer task failing to vote for none.
    h = Harness()
    _, twice = h.join_new(client_id="c0", protocols=[("range", b"a"), ("range", b"b")])
    _, once = h.join_new(client_id="c1", protocols=[("range", b"")])
    h.advance(6_000)
    assert {r.result.protocol_name for r in (twice, once)} == {"range"}
    assert {r.result.error for r in (twice, once)} == {ErrorCode.NONE}


def test_disjoint_protocols_get_inconsistent_group_protocol() -> None:
    h = Harness()
    h.stable_group(1)
    disjoint = h.join(protocols=[("cooperative-sticky", b"")])
    assert disjoint.result.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocol_type="connect").result.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_first_join_needs_a_protocol_type_and_a_protocol() -> None:
    h = Harness()
    assert h.join(protocol_type="").result.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocols=[]).result.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_stable_leader_rejoin_rebalances() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    reply = h.join(member_id=leader)
    assert not reply.done
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.heartbeat("g", follower, 1) is ErrorCode.REBALANCE_IN_PROGRESS


def test_stable_follower_with_unchanged_metadata_does_not_rebalance() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    result = h.join(member_id=follower).result
    assert result.error is ErrorCode.NONE
    assert (result.generation_id, result.leader_id, result.members) == (1, leader, ())
    assert h.state() is GroupState.STABLE


def test_stable_follower_with_changed_metadata_rebalances() -> None:
    h = Harness()
    _, follower = h.stable_group(2)
    reply = h.join(member_id=follower, protocols=[("range", subscription("t", "other"))])
    assert not reply.done
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_join_with_unknown_member_id_gets_unknown_member_id() -> None:
    h = Harness()
    assert h.join(member_id="nobody").result.error is ErrorCode.UNKNOWN_MEMBER_ID  # no such group
    h.stable_group(1)
    assert h.join(member_id="nobody").result.error is ErrorCode.UNKNOWN_MEMBER_ID


def test_completing_rebalance_rejoin_with_same_metadata_gets_current_generation() -> None:
    h = Harness()
    a, _ = (h.join_new(client_id=c) for c in ("a", "b"))
    h.advance(6_000)
    leader_id = a[1].result.leader_id
    assert h.state() is GroupState.COMPLETING_REBALANCE
    again = h.join(member_id=leader_id).result
    assert again.error is ErrorCode.NONE and again.generation_id == 1 and len(again.members) == 2
    assert h.state() is GroupState.COMPLETING_REBALANCE


@pytest.mark.parametrize(
    ("session_ms", "error"),
    [
        (5_999, ErrorCode.INVALID_SESSION_TIMEOUT),
        (6_000, ErrorCode.MEMBER_ID_REQUIRED),
        (1_800_000, ErrorCode.MEMBER_ID_REQUIRED),
        (1_800_001, ErrorCode.INVALID_SESSION_TIMEOUT),
    ],
)
def test_session_timeout_outside_bounds_is_invalid(session_ms: int, error: ErrorCode) -> None:
    h = Harness()
    assert h.join(session_ms=session_ms).result.error is error


def test_over_max_size_new_member_is_rejected_and_group_unchanged() -> None:
    h = Harness(CoordinatorConfig(group_max_size=2))
    ids = h.stable_group(2)
    result = h.join(version=3).result
    assert (result.error, result.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    assert h.members() == set(ids)
    assert h.state() is GroupState.STABLE


def test_v0_join_uses_session_timeout_as_rebalance_timeout() -> None:
    h = Harness()
    h.join(version=0, session_ms=7_000, rebalance_ms=99_999)
    group = h.coordinator.get_group("g")
    assert group is not None
    assert group.rebalance_timeout_ms() == 7_000


def test_empty_group_id_is_invalid() -> None:
    h = Harness()
    assert h.join(group="").result.error is ErrorCode.INVALID_GROUP_ID
