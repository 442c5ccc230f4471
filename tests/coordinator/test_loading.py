"""Group loading and unloading in virtual time: answers while loading, reloaded groups, over-capacity."""

from __future__ import annotations

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupMetadataRecord,
    GroupState,
    LeavingMember,
    MemberMetadata,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS, Harness, subscription

T0 = TopicPartition("t", 0)


def loaded_group(h: Harness, n: int, group_id: str = "g") -> list[str]:
    """A Stable group of `n` members at generation 5, loaded as the offsets log would: its group
    record replayed, then the coordinator told the group is loaded."""
    ids = [f"m{i}" for i in range(n)]
    members = tuple(
        MemberMetadata(
            member_id,
            None,
            "client",
            "/10.0.0.1",
            30_000,
            SESSION_MS,
            subscription("t"),
            member_id.encode(),
        )
        for member_id in ids
    )
    h.coordinator.replay(GroupMetadataRecord(group_id, "consumer", 5, "range", ids[0], members, h.now))
    h.coordinator.on_loaded([group_id])
    return ids


def test_while_loading_heartbeat_is_none_sync_is_rebalance_in_progress_others_load_in_progress() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.sink.loading_groups.add("g")
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
