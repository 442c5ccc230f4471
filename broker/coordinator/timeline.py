"""The group timeline: what the coordinator did to each group, as a bounded ring of events per group.

A test (through `Steering.group_timeline`, `kafkito control timeline` or the HTTP endpoint) reads
the events back to see how a rebalance unfolded: state transitions, members joining and leaving,
evictions by session timeout, with the broker time, generation (or epoch) and reason of each.
The coordinator calls `transition` and `member_*`; nothing here feeds back into the coordinator.
Each group keeps its last `capacity` events (`group.timeline.max.events`); a capacity of 0 records
nothing.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from kafkito.purgatory import Clock

TimelineEvent = dict[str, Any]

# The states a group rebalances in (classic and KIP-848): entering one from outside starts a rebalance.
REBALANCING_STATES = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})
STABLE_STATE = "Stable"


class GroupTimeline:
    """Per-group rings of events, stamped with the broker clock's time."""

    __slots__ = ("_capacity", "_clock", "_groups", "_sequence")

    def __init__(self, clock: Clock, capacity: int) -> None:
        self._clock = clock
        self._capacity = max(capacity, 0)
        self._groups: dict[str, deque[TimelineEvent]] = {}
        self._sequence = 0  # one counter for every group: events of two groups can be ordered

    @property
    def capacity(self) -> int:
        return self._capacity

    def record(
        self,
        group_id: str,
        event: str,
        *,
        generation: int | None = None,
        reason: str | None = None,
        **details: Any,
    ) -> None:
        """Append one event to `group_id`'s ring (the oldest goes once the ring is full)."""
        if self._capacity == 0:
            return
        ring = self._groups.get(group_id)
        if ring is None:
            ring = self._groups[group_id] = deque(maxlen=self._capacity)
        self._sequence += 1
        entry: TimelineEvent = {
            "seq": self._sequence,
            "time_ms": self._clock.now_ms(),
            "group": group_id,
            "event": event,
            "generation": generation,
            "reason": reason,
        }
        entry.update(details)
        ring.append(entry)

    def transition(
        self,
        group_id: str,
        previous: str,
        state: str,
        *,
        generation: int | None,
        reason: str,
        members: list[str],
        protocol: str | None = None,
    ) -> None:
        """A state change; entering or leaving the rebalancing states also records its start or end."""
        if state in REBALANCING_STATES and previous not in REBALANCING_STATES:
            self.record(group_id, "rebalance_started", generation=generation, reason=reason)
        self.record(
            group_id,
            "transition",
            generation=generation,
            reason=reason,
            from_state=previous,
            to_state=state,
            members=members,
            protocol=protocol,
        )
        if state == STABLE_STATE and previous in REBALANCING_STATES:
            self.record(
                group_id, "rebalance_completed", generation=generation, reason=reason, members=members
            )

    def member_joined(
        self, group_id: str, member_id: str, *, generation: int | None, reason: str, **details: Any
    ) -> None:
        self.record(
            group_id, "member_joined", generation=generation, reason=reason, member=member_id, **details
        )

    def member_left(
        self,
        group_id: str,
        member_id: str,
        *,
        generation: int | None,
        reason: str,
        event: str | None = None,
        **details: Any,
    ) -> None:
        """A member going: `member_left` (it asked), `member_evicted` (its session expired) or
        `member_removed` (anything else, e.g. not rejoining in time). Without `event`, the
        coordinator's reason tells which."""
        if event is None:
            event = _removal_event(reason)
        self.record(group_id, event, generation=generation, reason=reason, member=member_id, **details)

    def events(self, group_id: str) -> list[TimelineEvent]:
        """The group's events, oldest first (copies: the caller may keep or change them)."""
        ring = self._groups.get(group_id)
        return [dict(event) for event in ring] if ring is not None else []

    def groups(self) -> list[str]:
        return sorted(self._groups)


def _removal_event(reason: str) -> str:
    """The classic coordinator's reasons name their cause: LeaveGroup, or a heartbeat expiration."""
    if "LeaveGroup" in reason:
        return "member_left"
    if "expiration" in reason or "session timeout" in reason:
        return "member_evicted"
    return "member_removed"
