"""Offset retention in virtual time (§7): what expires for each kind of group, and from when."""

from __future__ import annotations

from pathlib import Path

from kafkito.broker.coordinator import (
    ClassicGroup,
    GroupState,
    LeavingMember,
    OffsetAndMetadata,
    TopicPartition,
)
from kafkito.broker.coordinator.offset_expiry import expired_offsets
from kafkito.broker.offsets.records import GroupKey, OffsetKey
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import SESSION_MS
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness

RETENTION = 60_000
T0 = TopicPartition("t", 0)
U0 = TopicPartition("u", 0)


def keep_alive(o: OffsetsHarness, members: list[str], ms: int) -> None:
    """Advance `ms` while every member heartbeats, so a Stable group stays Stable."""
    step = SESSION_MS // 2
    for _ in range(ms // step):
        o.h.advance(step)
        for m in members:
            assert o.h.heartbeat("g", m, o.h.generation()) is ErrorCode.NONE
    o.h.advance(ms % step)


def offsets(o: OffsetsHarness, group: str = "g") -> dict[TopicPartition, int]:
    g = o.coordinator.get_group(group)
    return {} if g is None else {tp: om.offset for tp, om in g.offsets.items()}


def test_simple_consumer_offsets_expire_retention_after_their_commit(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    o.h.commit("g", {T0: 1})
    o.h.advance(10_000)
    o.h.commit("g", {U0: 2})
    o.h.advance(RETENTION - 10_001)
    assert o.manager.expire() == 0
    o.h.advance(1)  # T0 is exactly RETENTION old
    assert o.manager.expire() == 1
    assert offsets(o) == {U0: 2}
    assert o.records("g")[-1] == (OffsetKey("g", "t", 0), None)
    o.h.advance(10_000)
    assert o.manager.expire() == 1
    # No offsets left: the group is Dead and gone; it never had a generation, so no group tombstone.
    assert o.coordinator.get_group("g") is None
    assert o.records("g")[-1] == (OffsetKey("g", "u", 0), None)
    assert not any(isinstance(k, GroupKey) for k, _ in o.records("g"))
    assert o.coordinator.fetch_offsets("g", [T0])[1][T0].offset == -1


def test_a_new_commit_restarts_the_clock(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    o.h.commit("g", {T0: 1})
    o.h.advance(RETENTION - 1)
    o.h.commit("g", {T0: 2})
    o.h.advance(1)
    assert o.manager.expire() == 0
    assert offsets(o) == {T0: 2}


def test_empty_group_offsets_age_from_when_the_group_became_empty(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    leader, follower = o.h.stable_group(2)
    o.h.commit("g", {T0: 5}, member_id=leader, generation=1)
    keep_alive(o, [leader, follower], RETENTION * 2)  # old commit, but Stable and subscribed to t
    assert o.manager.expire() == 0
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    assert o.h.state() is GroupState.EMPTY
    o.h.advance(RETENTION - 1)
    assert o.manager.expire() == 0
    o.h.advance(1)
    assert o.manager.expire() == 1
    # Empty with nothing left: Dead, with a tombstone for the group record too (it had generations).
    assert o.coordinator.get_group("g") is None
    assert o.records("g")[-2:] == [(OffsetKey("g", "t", 0), None), (GroupKey("g"), None)]
    assert o.restart().coordinator.get_group("g") is None


def test_empty_group_without_a_state_timestamp_falls_back_to_commit_time() -> None:
    group = ClassicGroup("g", 0)
    group.protocol_type = "consumer"
    group.state_timestamp_ms = None
    group.offsets[T0] = OffsetAndMetadata(1, commit_timestamp_ms=100)
    assert expired_offsets(group, 100 + RETENTION - 1, RETENTION) == []
    assert expired_offsets(group, 100 + RETENTION, RETENTION) == [T0]


def test_stable_consumer_group_expires_only_unsubscribed_topics_by_commit_time(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    members = o.h.stable_group(2)  # subscribed to "t"
    o.h.commit("g", {T0: 1, U0: 2}, member_id=members[0], generation=1)
    keep_alive(o, members, RETENTION - 1)
    assert o.manager.expire() == 0
    keep_alive(o, members, 1)
    assert o.manager.expire() == 1
    assert offsets(o) == {T0: 1}
    assert o.h.state() is GroupState.STABLE


def test_stable_consumer_group_with_unknown_subscription_expires_nothing(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    o.h.stable_group(1, protocols=[("range", b"not a subscription")])
    group = o.coordinator.get_group("g")
    assert group is not None and group.subscribed_topics is None
    o.h.commit("g", {U0: 2}, member_id=group.member_ids()[0], generation=1)
    keep_alive(o, group.member_ids(), RETENTION * 3)
    assert o.manager.expire() == 0


def test_rebalancing_or_non_consumer_stable_groups_expire_nothing() -> None:
    for state, protocol_type in [
        (GroupState.PREPARING_REBALANCE, "consumer"),
        (GroupState.COMPLETING_REBALANCE, "consumer"),
        (GroupState.STABLE, "connect"),
    ]:
        group = ClassicGroup("g", 0, state)
        group.protocol_type = protocol_type
        group.subscribed_topics = set()
        group.offsets[U0] = OffsetAndMetadata(1, commit_timestamp_ms=0)
        assert expired_offsets(group, RETENTION * 10, RETENTION) == [], state


def test_explicit_expire_timestamp_takes_precedence(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    # OffsetCommit v2-v4 retention time: one expires long before retention, one long after.
    o.h.commit("g", {T0: OffsetAndMetadata(1, "", -1, o.h.now, o.h.now + 1_000)})
    o.h.commit("g", {U0: OffsetAndMetadata(2, "", -1, o.h.now, o.h.now + RETENTION * 5)})
    o.h.advance(1_000)
    assert o.manager.expire() == 1
    assert offsets(o) == {U0: 2}
    o.h.advance(RETENTION * 2)
    assert o.manager.expire() == 0
    # The explicit expiry is persisted (offset value v1) and still applies after a restart.
    r = o.restart(gap_ms=0)
    r.h.advance(WALL_EPOCH + RETENTION * 5 - r.h.now - 1)
    assert r.manager.expire() == 0
    r.h.advance(1)
    assert r.manager.expire() == 1


def test_offsets_with_a_write_in_flight_never_expire() -> None:
    group = ClassicGroup("g", 0)
    group.offsets[T0] = OffsetAndMetadata(1, commit_timestamp_ms=0)
    group.offsets[U0] = OffsetAndMetadata(1, commit_timestamp_ms=0)
    group.prepare_offset_commit({T0: OffsetAndMetadata(2, commit_timestamp_ms=RETENTION)})
    assert expired_offsets(group, RETENTION, RETENTION) == [U0]


def test_retention_survives_a_restart_counted_in_wall_time(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    o.h.commit("g", {T0: 1})
    o.h.advance(20_000)
    r = o.restart(gap_ms=30_000)  # 50 s of wall time since the commit
    r.h.advance(RETENTION - 50_001)
    assert r.manager.expire() == 0
    r.h.advance(1)
    assert r.manager.expire() == 1
    assert r.coordinator.get_group("g") is None


def test_groups_of_loading_partitions_are_left_alone(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    o.h.commit("g", {T0: 1})
    o.h.advance(RETENTION)
    o.manager.sink.loading.add(o.partition_of("g"))
    assert o.manager.expire() == 0
    o.manager.sink.loading.clear()
    assert o.manager.expire() == 1


def test_empty_group_without_offsets_dies_on_the_next_check(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, retention_ms=RETENTION)
    leader, follower = o.h.stable_group(2)
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    assert o.h.state() is GroupState.EMPTY
    assert o.manager.expire() == 0
    assert o.coordinator.get_group("g") is None
    assert o.records("g")[-1] == (GroupKey("g"), None)
    # A dead group id is free again: committing recreates it.
    assert o.h.commit("g", {T0: 3}).result == {T0: ErrorCode.NONE}
