"""Heartbeat and liveness in virtual time: error codes, session expiry, parked requests, 300 s joins."""

from __future__ import annotations

from kafkito.broker.coordinator import GroupState
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness


def test_heartbeat_codes_by_state_generation_and_member() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    assert h.heartbeat("g", follower, 1) is ErrorCode.NONE  # Stable
    assert h.heartbeat("g", follower, 0) is ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("g", "stranger", 1) is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("nope", follower, 1) is ErrorCode.UNKNOWN_MEMBER_ID
    h.join(member_id=leader)
    assert h.heartbeat("g", follower, 1) is ErrorCode.REBALANCE_IN_PROGRESS  # PreparingRebalance
    h.join(member_id=follower)
    assert h.state() is GroupState.COMPLETING_REBALANCE
    assert h.heartbeat("g", follower, 2) is ErrorCode.NONE  # CompletingRebalance


def test_heartbeat_to_an_empty_group_is_unknown_member_id() -> None:
    h = Harness()
    h.commit("g", {})
    assert h.heartbeat("g", "x", -1) is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_with_empty_group_id_is_invalid_group_id() -> None:
    assert Harness().heartbeat("", "x", 1) is ErrorCode.INVALID_GROUP_ID


def test_member_without_heartbeats_is_removed_at_its_session_timeout() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    for _ in range(3):
        h.advance(SESSION_MS // 4)
        assert h.heartbeat("g", leader, 1) is ErrorCode.NONE
    h.advance(SESSION_MS // 4)
    assert h.members() == {leader}
    assert h.heartbeat("g", leader, 1) is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.heartbeat("g", follower, 1) is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeats_keep_a_member_alive_indefinitely() -> None:
    h = Harness()
    ids = h.stable_group(2)
    for _ in range(100):
        h.advance(SESSION_MS - 1)
        assert all(h.heartbeat("g", m, 1) is ErrorCode.NONE for m in ids)
    assert h.members() == set(ids)
    assert h.state() is GroupState.STABLE


def test_session_deadline_is_exact_to_the_millisecond() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.advance(5_000)
    h.heartbeat("g", leader, 1)
    h.heartbeat("g", follower, 1)
    h.advance(SESSION_MS - 1)
    assert h.members() == {leader, follower}
    h.advance(1)
    assert h.members() == set()


def test_parked_join_never_expires() -> None:
    h = Harness()
    leader, follower = h.stable_group(2, rebalance_ms=60_000)
    parked = h.join(member_id=follower, rebalance_ms=60_000, protocols=[("range", b"changed")])
    for _ in range(10):  # 30 s: three session timeouts of the parked member
        h.advance(3_000)
        assert h.heartbeat("g", leader, 1) is ErrorCode.REBALANCE_IN_PROGRESS
    assert not parked.done
    assert h.members() == {leader, follower}
    h.join(member_id=leader, rebalance_ms=60_000)
    assert parked.result.error is ErrorCode.NONE and parked.result.generation_id == 2


def test_new_member_unanswered_join_fails_with_unknown_member_id_after_300s() -> None:
    h = Harness()
    (leader,) = h.stable_group(1, rebalance_ms=600_000)
    newcomer = h.join(version=3, client_id="new", rebalance_ms=600_000)
    assert h.state() is GroupState.PREPARING_REBALANCE
    elapsed = 0
    while elapsed < 300_000 - 3_000:
        h.advance(3_000)
        elapsed += 3_000
        assert h.heartbeat("g", leader, 1) is ErrorCode.REBALANCE_IN_PROGRESS  # the leader never rejoins
    assert not newcomer.done
    h.advance(300_000 - elapsed)
    assert (newcomer.result.error, newcomer.result.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "")
    assert h.members() == {leader}


def test_removed_parked_member_of_a_rebalancing_group_lets_the_join_complete() -> None:
    h = Harness()
    leader, _follower = h.stable_group(2, rebalance_ms=60_000)
    rejoin = h.join(member_id=leader, rebalance_ms=60_000)
    h.advance(SESSION_MS)  # the follower neither heartbeats nor rejoins: it expires
    assert rejoin.result.error is ErrorCode.NONE
    assert rejoin.result.generation_id == 2
    assert h.members() == {leader}


def test_commit_resets_the_session_deadline_in_stable() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    from kafkito.broker.coordinator import TopicPartition

    for _ in range(3):
        h.advance(SESSION_MS - 1)
        h.heartbeat("g", leader, 1)
        reply = h.commit("g", {TopicPartition("t", 0): 5}, member_id=follower, generation=1)
        assert reply.result == {TopicPartition("t", 0): ErrorCode.NONE}
    assert h.members() == {leader, follower}
