"""A streams group's target assignment: when it may be computed, and the records a new one writes.

Kafka 4.4 holds a target assignment back twice: a new group's first waits
`group.streams.initial.rebalance.delay.ms` (3 s) for more members, on a timer whose expiry computes
it; a later one is computed at most once per `group.streams.assignment.interval.ms` (1 s), by the
first heartbeat after the interval (nothing wakes the group in between). Meanwhile members reconcile
towards the last target and their heartbeats carry the ASSIGNMENT_DELAYED status.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkito.broker.coordinator.streams.assignor import AssignmentMember, assign
from kafkito.broker.coordinator.streams.internal_topics import ConfiguredTopology, StatusCode
from kafkito.broker.coordinator.streams.member import StreamsGroupMember
from kafkito.broker.coordinator.streams.records import (
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMemberRecord,
    StreamsGroupTargetAssignmentMetadataRecord,
)
from kafkito.broker.coordinator.streams.requests import Status
from kafkito.broker.coordinator.streams.tasks import TaskSet

INITIAL_DELAY = Status(
    StatusCode.ASSIGNMENT_DELAYED, "Assignment delayed due to the configured initial rebalance delay."
)
INTERVAL_DELAY = Status(
    StatusCode.ASSIGNMENT_DELAYED, "Assignment delayed due to the configured assignment interval."
)


def may_assign(last_ms: int, interval_ms: int, now_ms: int) -> bool:
    """Kafka's canComputeNextTargetAssignment: never assigned, no interval, or the interval passed."""
    return last_ms == 0 or interval_ms == 0 or now_ms >= last_ms + interval_ms


def target_record(gid: str, member_id: str, tasks: TaskSet) -> StreamsGroupTargetAssignmentMemberRecord:
    return StreamsGroupTargetAssignmentMemberRecord(gid, member_id, *tasks.wire())


def new_target(
    gid: str,
    members: Mapping[str, StreamsGroupMember],
    targets: Mapping[str, TaskSet],
    configured: ConfiguredTopology | None,
    num_standby_replicas: int,
    epoch: int,
    now_ms: int,
    records: list[StreamsGroupRecord],
) -> dict[str, TaskSet]:
    """Every member's new target at `epoch`; the records of the members whose target changed and the
    target metadata (with the time, which the assignment interval counts from) go to `records`."""
    spec = {mid: AssignmentMember(mid, m.process_id or mid, m.assigned) for mid, m in members.items()}
    counts = configured.task_counts if configured is not None and configured.is_ready else {}
    new = assign(spec, counts, num_standby_replicas)
    for member_id in sorted(new):
        if targets.get(member_id) != new[member_id]:
            records.append(target_record(gid, member_id, new[member_id]))
    records.append(StreamsGroupTargetAssignmentMetadataRecord(gid, epoch, now_ms))
    return new
