"""Completion racing expiry for the coordinator's delayed operations: each completes exactly once."""

from __future__ import annotations

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupState,
    JoinGroupRequest,
    JoinGroupResult,
    SyncGroupRequest,
    SyncGroupResult,
)
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness, Reply

NO_DELAY = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def test_join_completed_by_the_last_rejoin_is_not_completed_again_by_its_timeout() -> None:
    h = Harness()
    leader, follower = h.stable_group(2, rebalance_ms=5_000)
    h.join(member_id=leader, rebalance_ms=5_000)
    h.advance(4_999)
    h.join(member_id=follower, rebalance_ms=5_000)  # completes the phase one ms before its deadline
    assert h.generation() == 2
    h.sync("g", leader, 2, {leader: b"a", follower: b"b"})
    h.sync("g", follower, 2)
    h.advance(1)  # the old deadline passes: nothing happens
    h.advance(4_000)
    assert (h.generation(), h.state()) == (2, GroupState.STABLE)
    assert h.unanswered() == []


def test_rejoin_arriving_at_the_deadline_millisecond_finds_the_phase_completed() -> None:
    h = Harness()
    leader, follower = h.stable_group(2, rebalance_ms=5_000)
    rejoin = h.join(member_id=leader, rebalance_ms=5_000)
    h.advance(5_000)  # the timer fires first: the follower did not rejoin in time
    assert rejoin.result.generation_id == 2
    late = h.join(member_id=follower, rebalance_ms=5_000)
    assert late.result.error is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.generation() == 2


def test_heartbeat_one_ms_before_the_deadline_replaces_it() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    for _ in range(5):
        h.advance(SESSION_MS - 1)
        assert h.heartbeat("g", leader, 1) is ErrorCode.NONE
        assert h.heartbeat("g", follower, 1) is ErrorCode.NONE
    assert h.coordinator.heartbeat_purgatory.pending == 2  # one live deadline per member


def test_sync_completing_the_delayed_sync_is_not_expired_again() -> None:
    h = Harness(NO_DELAY)
    replies = [h.join_new(client_id=c, rebalance_ms=5_000)[1] for c in ("a", "b")]
    h.advance(0)
    leader = replies[0].result.leader_id
    ids = [r.result.member_id for r in replies]
    for m in ids:
        h.sync("g", m, 1, {x: b"x" for x in ids} if m == leader else None)
    h.advance(5_000)
    assert h.members() == set(ids)
    assert h.state() is GroupState.STABLE


def test_callbacks_may_call_back_into_the_coordinator() -> None:
    """A client that syncs from inside its join callback, as an eager event loop would."""
    h = Harness(NO_DELAY)
    syncs: list[Reply[SyncGroupResult]] = []

    def on_join(result: JoinGroupResult) -> None:
        if result.error is ErrorCode.MEMBER_ID_REQUIRED:
            h.coordinator.join_group(
                JoinGroupRequest(
                    "g", result.member_id, None, "c", "h", 5_000, SESSION_MS, "consumer", [("range", b"")]
                ),
                on_join,
            )
        elif result.error is ErrorCode.NONE:
            reply: Reply[SyncGroupResult] = Reply(f"sync {result.member_id}")
            syncs.append(reply)
            assignment = {m.member_id: b"mine" for m in result.members}
            h.coordinator.sync_group(
                SyncGroupRequest("g", result.generation_id, result.member_id, None, None, None, assignment),
                reply,
            )

    for _ in range(3):
        h.coordinator.join_group(
            JoinGroupRequest("g", "", None, "c", "h", 5_000, SESSION_MS, "consumer", [("range", b"")]),
            on_join,
        )
    h.advance(0)
    assert len(syncs) == 3
    assert [s.result.assignment for s in syncs] == [b"mine"] * 3
    assert h.state() is GroupState.STABLE
