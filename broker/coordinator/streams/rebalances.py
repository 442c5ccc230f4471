"""What the timeline records of a streams group's records once written: a rebalance starts when the group
epoch moves (with why: a member joined or left, its metadata changed, the topology's topics changed, the
assignment configs changed) and completes when the group is Stable again, whatever the states in between
(a lone member reconciles in the heartbeat that bumped the epoch, and NotReady waits for topics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.streams.member import StreamsGroupState
from kafkito.broker.coordinator.streams.records import (
    StreamsGroupMemberRecord,
    StreamsGroupMemberTombstone,
    StreamsGroupMetadataRecord,
    StreamsGroupRecord,
)

if TYPE_CHECKING:
    from kafkito.broker.coordinator.streams.group import StreamsGroup
    from kafkito.broker.coordinator.timeline import GroupTimeline

STABLE = StreamsGroupState.STABLE


class Before:
    """The group as it was before the records: its state, epoch, members and metadata hash."""

    __slots__ = ("epoch", "members", "metadata_hash", "state")

    def __init__(self, group: StreamsGroup | None) -> None:
        self.state = group.state if group is not None else None
        self.epoch = group.group_epoch if group is not None else 0
        self.members = set(group.members) if group is not None else set()
        self.metadata_hash = group.metadata_hash if group is not None else 0


def rebalance_reason(before: Before, records: Sequence[StreamsGroupRecord]) -> str:
    """Why the records bumped the group epoch, as a reader of the timeline wants it."""
    joined = [
        r.member_id
        for r in records
        if isinstance(r, StreamsGroupMemberRecord) and r.member_id not in before.members
    ]
    left = [r.member_id for r in records if isinstance(r, StreamsGroupMemberTombstone)]
    if joined and left:
        return f"static member {left[0]} replaced by {joined[0]}"
    if joined:
        return f"member {joined[0]} joined"
    if left:
        return f"member {left[0]} left or was fenced"
    for record in records:
        if isinstance(record, StreamsGroupMetadataRecord) and record.metadata_hash != before.metadata_hash:
            return "the topology's topics changed"
    if any(isinstance(r, StreamsGroupMemberRecord) for r in records):
        return "a member's metadata changed"
    return "the group's metadata changed"


def record_rebalance(
    timeline: GroupTimeline, before: Before, after: StreamsGroup, records: Sequence[StreamsGroupRecord]
) -> None:
    """The state transition, and the rebalance it starts or completes."""
    members = sorted(after.members)
    state, epoch = after.state, after.group_epoch
    started = epoch > before.epoch and before.state is not None
    if started:
        timeline.record(
            after.group_id, "rebalance_started", generation=epoch, reason=rebalance_reason(before, records)
        )
    if before.state is not state:
        timeline.record(
            after.group_id,
            "transition",
            generation=epoch,
            reason="streams group records",
            from_state=before.state.value if before.state is not None else "",
            to_state=state.value,
            members=members,
            protocol="streams",
        )
    if state is STABLE and (started or before.state is not STABLE) and before.state is not None:
        timeline.record(
            after.group_id,
            "rebalance_completed",
            generation=epoch,
            reason="every member reconciled",
            members=members,
        )
