"""Group loading and unloading in virtual time: answers while loading, reloaded groups, over-capacity."""

from __future__ import annotations

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    Group,
    GroupState,
    LeavingMember,
    Member,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness, subscription

T0 = TopicPartition("t", 0)


def loaded_group(h: Harness, n: int, group_id: str = "g") -> list[str]:
    """A Stable group of `n` members at generation 5, as the offsets log would rebuild it."""
    group = Group(group_id, h.now, GroupState.STABLE)
    group.generation_id = 5
    group.protocol_type = "consumer"
    group.protocol_name = "range"
    ids = [f"m{i}" for i in range(n)]
    for member_id in ids:
        group.add(
            Member(
                member_id,
                None,
                "client",
                "/10.0.0.1",
                30_000,
                SESSION_MS,
                "consumer",
                [("range", subscription("t"))],
                assignment=member_id.encode(),
            )
        )
    h.coordinator.load_group(group)
    return ids


def test_while_loading_heartbeat_is_none_sync_is_rebalance_in_progress_others_load_in_progress() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.store.loading_groups.add("g")
    loading = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert h.heartbeat("g", follower, 1) is ErrorCode.NONE
    assert h.sync("g", follower, 1).result.error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.join(member_id=leader).result.error is loading
    assert h.leave("g", LeavingMember(follower)).error is loading
    assert h.commit("g", {T0: 1}, member_id=follower, generation=1).result == {T0: loading}
    assert h.coordinator.fetch_offsets("g", [T0]) == (loading, {})
    assert h.coordinator.describe_groups(["g"])[0].error is loading
    assert h.coordinator.delete_groups(["g"]) == {"g": loading}
    assert h.coordinator.delete_offsets("g", [T0]) == (loading, {})
    error, groups = h.coordinator.list_groups()
    assert error is loading and [g.group_id for g in groups] == ["g"]  # the list is still returned
    assert h.members() == {leader, follower}


def test_inactive_coordinator_is_coordinator_not_available() -> None:
    h = Harness()
    h.coordinator.shutdown()
    assert h.join().result.error is ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert h.heartbeat("g", "m", 1) is ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert h.coordinator.list_groups() == (ErrorCode.COORDINATOR_NOT_AVAILABLE, [])


def test_loaded_stable_group_serves_its_members_and_arms_their_deadlines() -> None:
    h = Harness()
    ids = loaded_group(h, 2)
    assert h.sync("g", ids[1], 5).result.assignment == b"m1"
    h.advance(SESSION_MS - 1)
    assert h.heartbeat("g", ids[0], 5) is ErrorCode.NONE
    h.advance(1)
    assert h.members() == {ids[0]}  # m1 never heartbeat after the load
    assert h.state() is GroupState.PREPARING_REBALANCE


def test_loaded_group_over_capacity_rebalances_and_sheds_the_last_rejoiner() -> None:
    h = Harness(CoordinatorConfig(group_max_size=2))
    ids = loaded_group(h, 3)
    assert h.state() is GroupState.PREPARING_REBALANCE
    first, second = h.join(member_id=ids[0]), h.join(member_id=ids[1])
    third = h.join(member_id=ids[2]).result
    assert (third.error, third.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    assert ids[2] not in h.members()
    assert first.result.generation_id == second.result.generation_id == 6
    assert h.members() == set(ids[:2])


def test_unload_answers_parked_requests_with_not_coordinator() -> None:
    h = Harness()
    leader, _follower = h.stable_group(2)
    parked_join = h.join(member_id=leader)
    h.coordinator.unload_group("g")
    assert parked_join.result.error is ErrorCode.NOT_COORDINATOR
    assert h.coordinator.get_group("g") is None
    h.advance(60_000)  # leftover deadlines fire harmlessly
    assert h.unanswered() == []


def test_unload_during_completing_rebalance_answers_parked_syncs() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(member_id=leader)
    h.join(member_id=follower)
    parked = h.sync("g", follower, 2)
    h.coordinator.unload_group("g")
    assert parked.result.error is ErrorCode.NOT_COORDINATOR
