"""The timeline drawing from the coordinator's own recorder: bands per generation, member rows,
marks, reasons; a group of 50 members and 100 generations stays legible (bands of a fixed minimum
width, one row per member, every generation labelled)."""

from __future__ import annotations

import re

from kafkito.broker.console.timeline_view import MIN_BAND_W, ROW_H, layout, svg
from kafkito.broker.coordinator.timeline import GroupTimeline
from kafkito.purgatory import ManualClock


def _rebalance(timeline: GroupTimeline, generation: int, members: list[str], reason: str) -> None:
    timeline.transition(
        "g", "Stable", "PreparingRebalance", generation=generation, reason=reason, members=members
    )
    timeline.transition("g", "PreparingRebalance", "CompletingRebalance", generation=generation + 1,
                        reason="join phase completed", members=members)  # fmt: skip
    timeline.transition("g", "CompletingRebalance", "Stable", generation=generation + 1,
                        reason="assignment stored", members=members)  # fmt: skip


def _busy_group() -> GroupTimeline:
    clock = ManualClock()
    timeline = GroupTimeline(clock, 100_000)
    members: list[str] = []
    for generation in range(100):
        clock.advance(1000)
        if generation < 50:
            member = f"consumer-{generation}-{generation:08x}"
            members.append(member)
            timeline.member_joined(
                "g", member, generation=generation, reason="join", client_id=f"app-{generation}"
            )
            reason = f"adding new member {member}"
        elif generation % 2 == 0:
            gone = members.pop()
            timeline.member_left("g", gone, generation=generation, reason="member left by LeaveGroup")
            reason = f"member {gone} left by LeaveGroup"
        else:
            reason = "member app-x rejoining during Stable"
        _rebalance(timeline, generation, list(members), reason)
    return timeline


def test_every_generation_is_a_band_with_its_reason_and_members() -> None:
    view = layout(_busy_group().events("g"))
    bands = view["generations"]
    assert [b["generation"] for b in bands] == list(range(101))
    assert bands[1]["reason"].startswith("adding new member consumer-0-")
    assert bands[51]["reason"].endswith("left by LeaveGroup")
    assert len(bands[50]["members"]) == 50 and len(bands[100]["members"]) == 25
    assert len(view["members"]) == 50
    kinds = [m["kind"] for m in view["marks"]]
    assert kinds.count("join") == 50 and kinds.count("leave") == 25
    assert kinds.count("sync") == sum(len(b["members"]) for b in bands if b["generation"] > 0)


def test_fifty_members_and_a_hundred_generations_stay_legible() -> None:
    drawing = svg(_busy_group().events("g"))
    assert 'data-generations="101"' in drawing and 'data-members="50"' in drawing
    assert len(re.findall(r'<g class="band"', drawing)) == 101
    labels = re.findall(r'class="gen">(\d+)</text>', drawing)
    assert labels == [str(n) for n in range(101)]
    widths = {float(w) for w in re.findall(r'<rect x="[\d.]+" y="0" width="([\d.]+)"', drawing)}
    assert widths == {float(MIN_BAND_W)}  # never squeezed below legibility: the box scrolls instead
    height = int(re.search(r'height="(\d+)"', drawing).group(1))  # type: ignore[union-attr]
    assert height >= 50 * ROW_H
    assert all(f"app-{n} ·" in drawing for n in range(50))  # every member's row is labelled


def test_an_empty_timeline_says_so() -> None:
    assert "No rebalance recorded yet" in svg([])
