"""SyncGroup in virtual time: errors by state, parked follower syncs, store failures, DelayedSync."""

from __future__ import annotations

from kafkito.broker.coordinator import CoordinatorConfig, GroupState, InMemoryRecordSink
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness

NO_DELAY = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def joined_group(h: Harness, n: int, **kwargs: object) -> tuple[str, list[str], int]:
    """n members through the join phase (CompletingRebalance): leader, all ids, generation."""
    replies = [h.join_new(client_id=f"c{i}", **kwargs)[1] for i in range(n)]
    h.advance(0)
    while not replies[0].done:
        h.advance(1_000)
    results = [r.result for r in replies]
    assert h.state() is GroupState.COMPLETING_REBALANCE
    return results[0].leader_id, [r.member_id for r in results], results[0].generation_id


def test_sync_during_preparing_rebalance_is_rebalance_in_progress() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(member_id=leader)
    assert h.sync("g", follower, 1).result.error is ErrorCode.REBALANCE_IN_PROGRESS


def test_sync_to_empty_or_missing_group_is_unknown_member_id() -> None:
    h = Harness()
    assert h.sync("g", "someone", 0).result.error is ErrorCode.UNKNOWN_MEMBER_ID
    h.commit("g", {})  # creates an Empty group for offsets only
    assert h.state() is GroupState.EMPTY
    assert h.sync("g", "someone", 0).result.error is ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_in_stable_returns_the_stored_assignment() -> None:
    h = Harness()
    _leader, follower = h.stable_group(2)
    result = h.sync("g", follower, 1).result
    assert (result.error, result.assignment) == (ErrorCode.NONE, follower.encode())
    assert (result.protocol_type, result.protocol_name) == ("consumer", "range")


def test_sync_in_stable_resets_the_session_deadline() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    for _ in range(3):
        h.advance(SESSION_MS - 1_000)
        assert h.sync("g", follower, 1).result.error is ErrorCode.NONE
        assert h.heartbeat("g", leader, 1) is ErrorCode.NONE
    assert h.members() == {leader, follower}


def test_sync_with_wrong_generation_is_illegal_generation() -> None:
    h = Harness()
    _, follower = h.stable_group(2)
    assert h.sync("g", follower, 7).result.error is ErrorCode.ILLEGAL_GENERATION


def test_sync_v5_protocol_type_or_name_mismatch_is_inconsistent_group_protocol() -> None:
    h = Harness()
    _, follower = h.stable_group(2)
    assert (
        h.sync("g", follower, 1, protocol_type="connect").result.error
        is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    assert (
        h.sync("g", follower, 1, protocol_name="sticky").result.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    ok = h.sync("g", follower, 1, protocol_type="consumer", protocol_name="range").result
    assert ok.error is ErrorCode.NONE


def test_follower_syncs_are_held_until_the_leader_assignment_is_stored() -> None:
    store = InMemoryRecordSink(defer_writes=True)
    h = Harness(sink=store)
    leader, ids, generation = joined_group(h, 3)
    followers = [m for m in ids if m != leader]
    held = [h.sync("g", m, generation) for m in followers]
    assert not any(r.done for r in held)
    leader_sync = h.sync("g", leader, generation, {leader: b"L", followers[0]: b"F0"})
    assert not leader_sync.done and not any(r.done for r in held)  # the group record is being written
    assert h.state() is GroupState.COMPLETING_REBALANCE
    store.complete_writes()
    assert leader_sync.result.assignment == b"L"
    assert held[0].result.assignment == b"F0"
    assert held[1].result.assignment == b""  # omitted by the leader: empty bytes
    assert all(r.result.error is ErrorCode.NONE for r in [leader_sync, *held])
    assert h.state() is GroupState.STABLE


def test_follower_syncing_after_the_leader_gets_its_assignment_at_once() -> None:
    h = Harness()
    leader, ids, generation = joined_group(h, 2)
    (follower,) = [m for m in ids if m != leader]
    h.sync("g", leader, generation, {follower: b"yours"})
    assert h.sync("g", follower, generation).result.assignment == b"yours"


def test_failed_group_store_answers_syncs_with_mapped_error_and_rebalances() -> None:
    store = InMemoryRecordSink()
    h = Harness(sink=store)
    leader, ids, generation = joined_group(h, 2)
    (follower,) = [m for m in ids if m != leader]
    held = h.sync("g", follower, generation)
    store.fail_with = ErrorCode.NOT_LEADER_OR_FOLLOWER
    leader_sync = h.sync("g", leader, generation, {leader: b"a", follower: b"b"})
    assert leader_sync.result.error is ErrorCode.NOT_COORDINATOR
    assert held.result.error is ErrorCode.NOT_COORDINATOR
    assert held.result.assignment == b""
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_store_timeout_maps_to_rebalance_in_progress() -> None:
    store = InMemoryRecordSink()
    h = Harness(sink=store)
    leader, _, generation = joined_group(h, 1)
    store.fail_with = ErrorCode.REQUEST_TIMED_OUT
    assert h.sync("g", leader, generation, {}).result.error is ErrorCode.REBALANCE_IN_PROGRESS


def test_late_store_answer_after_a_new_rebalance_is_ignored() -> None:
    store = InMemoryRecordSink(defer_writes=True)
    h = Harness(sink=store)
    leader, ids, generation = joined_group(h, 2)
    (follower,) = [m for m in ids if m != leader]
    leader_sync = h.sync("g", leader, generation, {leader: b"a", follower: b"b"})
    h.join(member_id=follower, protocols=[("range", b"changed")])  # rebalance while the write is in flight
    assert leader_sync.result.error is ErrorCode.REBALANCE_IN_PROGRESS
    store.complete_writes()
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout() -> None:
    h = Harness(NO_DELAY)
    leader, ids, generation = joined_group(h, 3, rebalance_ms=5_000)
    silent = ids[2] if ids[2] != leader else ids[1]
    talker = next(m for m in ids if m not in (leader, silent))
    h.sync("g", leader, generation, {m: m.encode() for m in ids})
    assert h.state() is GroupState.STABLE
    h.sync("g", talker, generation)
    h.advance(4_999)
    assert h.members() == set(ids)
    h.advance(1)  # even in Stable, the member that never synced is removed and the group rebalances
    assert h.members() == {leader, talker}
    assert h.state() is GroupState.PREPARING_REBALANCE
    assert h.heartbeat("g", talker, generation) is ErrorCode.REBALANCE_IN_PROGRESS


def test_delayed_sync_expiry_in_completing_rebalance_answers_parked_syncs() -> None:
    h = Harness(NO_DELAY)
    leader, ids, generation = joined_group(h, 2, rebalance_ms=5_000)
    (follower,) = [m for m in ids if m != leader]
    held = h.sync("g", follower, generation)
    h.advance(5_000)  # the leader never sent its assignment
    assert held.result.error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.members() == {follower}
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_parked_sync_never_expires_while_the_leader_is_alive() -> None:
    h = Harness()
    leader, ids, generation = joined_group(h, 2, rebalance_ms=60_000)
    (follower,) = [m for m in ids if m != leader]
    held = h.sync("g", follower, generation)
    for _ in range(10):  # 30 s: three session timeouts
        h.advance(3_000)
        assert h.heartbeat("g", leader, generation) is ErrorCode.NONE
    assert not held.done
    assert h.members() == {leader, follower}
    h.sync("g", leader, generation, {follower: b"late"})
    assert held.result.assignment == b"late"
