"""The group timeline the coordinator records: transitions, joins, evictions, bounded per group."""

from __future__ import annotations

from dataclasses import replace

from kafkito.broker.coordinator import CoordinatorConfig
from kafkito.broker.coordinator.timeline import GroupTimeline
from kafkito.purgatory import ManualClock
from tests.coordinator.harness import SESSION_MS, Harness


def events(h: Harness, group: str = "g") -> list[str]:
    return [e["event"] for e in h.coordinator.group_timeline(group)]


def test_a_rebalance_and_an_eviction_are_recorded_with_broker_time_generation_and_reason() -> None:
    h = Harness(replace(CoordinatorConfig(), group_initial_rebalance_delay_ms=0))
    member_id, joined = h.join_new("g")
    h.advance(0)
    assert joined.result.generation_id == 1
    h.sync("g", member_id, 1, {member_id: b"a"})
    h.advance(SESSION_MS + 1)  # no heartbeat: the session expires
    timeline = h.coordinator.group_timeline("g")
    assert events(h) == [
        "member_joined",
        "rebalance_started",
        "transition",  # Empty -> PreparingRebalance
        "transition",  # PreparingRebalance -> CompletingRebalance
        "transition",  # CompletingRebalance -> Stable
        "rebalance_completed",
        "member_evicted",
        "rebalance_started",
        "transition",  # Stable -> PreparingRebalance
        "transition",  # PreparingRebalance -> Empty (generation 2, no members)
    ]
    states = [
        (e["from_state"], e["to_state"], e["generation"]) for e in timeline if e["event"] == "transition"
    ]
    assert states == [
        ("Empty", "PreparingRebalance", 0),
        ("PreparingRebalance", "CompletingRebalance", 1),
        ("CompletingRebalance", "Stable", 1),
        ("Stable", "PreparingRebalance", 1),
        ("PreparingRebalance", "Empty", 2),
    ]
    joined_event, evicted = timeline[0], timeline[6]
    assert joined_event["member"] == member_id and joined_event["time_ms"] == 0
    assert evicted["member"] == member_id
    assert evicted["time_ms"] == SESSION_MS  # the session deadline, as the timer fired it
    assert "heartbeat expiration" in evicted["reason"]
    assert [e["seq"] for e in timeline] == sorted(e["seq"] for e in timeline)


def test_a_member_leaving_is_recorded_as_left() -> None:
    from kafkito.broker.coordinator import LeavingMember

    h = Harness(replace(CoordinatorConfig(), group_initial_rebalance_delay_ms=0))
    member_id, _ = h.join_new("g")
    h.advance(0)
    h.sync("g", member_id, 1, {member_id: b"a"})
    h.leave("g", LeavingMember(member_id, None, "bye"))
    left = [e for e in h.coordinator.group_timeline("g") if e["event"] == "member_left"]
    assert len(left) == 1 and left[0]["member"] == member_id and "bye" in left[0]["reason"]


def test_the_ring_keeps_the_last_events_of_each_group() -> None:
    timeline = GroupTimeline(ManualClock(), capacity=3)
    for i in range(5):
        timeline.record("a", "e", generation=i)
    timeline.record("b", "e", generation=9)
    assert [e["generation"] for e in timeline.events("a")] == [2, 3, 4]
    assert [e["generation"] for e in timeline.events("b")] == [9]
    assert timeline.events("unknown") == []
    assert timeline.groups() == ["a", "b"]


def test_a_capacity_of_zero_records_nothing() -> None:
    h = Harness(replace(CoordinatorConfig(), group_timeline_max_events=0, group_initial_rebalance_delay_ms=0))
    h.join_new("g")
    assert h.coordinator.group_timeline("g") == []


def test_events_handed_out_are_copies() -> None:
    timeline = GroupTimeline(ManualClock(), capacity=3)
    timeline.record("a", "e")
    timeline.events("a")[0]["event"] = "changed"
    assert timeline.events("a")[0]["event"] == "e"


def test_a_static_member_rejoining_under_a_new_id_is_recorded_as_replaced() -> None:
    h = Harness()
    _, s2 = h.stable_group(2, instances=["s1", "s2"])
    restarted = h.join(instance="s2", version=8).result
    replaced = [e for e in h.coordinator.group_timeline("g") if e["event"] == "member_replaced"]
    assert len(replaced) == 1
    assert (replaced[0]["old_member"], replaced[0]["member"], replaced[0]["instance"]) == (
        s2,
        restarted.member_id,
        "s2",
    )
