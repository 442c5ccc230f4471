"""A streams group's rebalances on the coordinator's timeline, as the console draws them: a rebalance
starts when the group epoch moves (with why) and completes when the group is Stable again, even when a
lone member reconciles in the heartbeat that moved it; members' joins, leaves and static replacements."""

from __future__ import annotations

from typing import Any

from tests.streams_groups.harness import APP, App, Harness, converge


def _events(h: Harness) -> list[tuple[Any, ...]]:
    out = []
    for e in h.coordinator.group_timeline(APP):
        kind = e["event"]
        detail = e.get("to_state") if kind == "transition" else e.get("member") or e.get("reason")
        out.append((kind, e["generation"], detail))
    return out


def test_epoch_moves_are_rebalances_with_their_reasons() -> None:
    h = Harness()
    h.topics.create("words", 2)
    a, b = App("a"), App("b")
    h.join(a)  # the internal topics are missing: NotReady, until the broker creates them
    converge(h, [a])
    h.join(b)
    converge(h, [a, b])
    h.leave(b)
    converge(h, [a])
    events = _events(h)
    assert events[:2] == [("member_joined", 1, "a"), ("transition", 2, "NotReady")]
    assert events[2:5] == [
        ("rebalance_started", 3, "the topology's topics changed"),
        ("transition", 3, "Stable"),
        ("rebalance_completed", 3, "every member reconciled"),
    ]
    started = [(g, why) for kind, g, why in events if kind == "rebalance_started"]
    assert started == [
        (3, "the topology's topics changed"),
        (4, "member b joined"),
        (5, "member b left or was fenced"),
    ]
    completed = [g for kind, g, _ in events if kind == "rebalance_completed"]
    assert completed == [3, 4, 5]
    assert ("member_joined", 3, "b") in events and ("member_left", 4, "b") in events


def test_a_static_member_rejoining_is_a_replacement_on_the_timeline() -> None:
    h = Harness()
    h.topics.create("words", 2)
    a = App("a1", instance_id="i-a")
    h.join(a)
    converge(h, [a])
    h.leave(a, static=True)
    again = App("a2", instance_id="i-a", process_id=a.process_id)
    h.join(again)
    replaced = [e for e in h.coordinator.group_timeline(APP) if e["event"] == "member_replaced"]
    assert [(e["member"], e["old_member"], e["instance"]) for e in replaced] == [("a2", "a1", "i-a")]
