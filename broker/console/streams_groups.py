"""Streams groups (KIP-1071) as the console shows them: state and epochs, the topology (subtopologies with
their source, repartition and changelog topics), each member's active, standby and warm-up tasks with
its epochs and reconciliation status, and the committed offset and lag of every input topic partition
(a source or repartition source topic: task p of a subtopology reads partition p of each)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafkito.broker.coordinator.streams.describe import DescribedAssignment, DescribedTopology
from kafkito.broker.coordinator.streams.tasks import TaskSet, WireTasks
from kafkito.broker.coordinator.streams.topology import TopicInfo
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.coordinator.streams.group import StreamsGroup


def is_streams_group(broker: Broker, group_id: str) -> bool:
    return broker.coordinator.get_streams_group(group_id) is not None


def task_ids(tasks: WireTasks) -> list[str]:
    """Kafka's task ids, `<subtopology>_<partition>`, in order."""
    return [f"{subtopology}_{partition}" for subtopology, partitions in tasks for partition in partitions]


def _roles(assignment: DescribedAssignment | TaskSet) -> dict[str, list[str]]:
    active, standby, warmup = assignment.wire() if isinstance(assignment, TaskSet) else tuple(assignment)
    return {"active": task_ids(active), "standby": task_ids(standby), "warmup": task_ids(warmup)}


def _internal(topics: Iterable[TopicInfo], counted: bool) -> list[dict[str, Any]]:
    return [{"name": t.name, "partitions": t.partitions if counted else None} for t in topics]


def _topology(described: DescribedTopology | None, group: StreamsGroup) -> dict[str, Any] | None:
    """The configured subtopologies once the topology is ready; before, the ones the members sent (their
    internal topics without partition counts yet) and why it is not ready."""
    if group.topology is None:
        return None
    configured = group.configured
    not_ready = None if configured is None or configured.is_ready else configured.detail
    counted = described is not None and described.subtopologies is not None
    shown = described.subtopologies if described is not None and described.subtopologies is not None else None
    subtopologies = [
        {
            "id": s.subtopology_id,
            "source_topics": sorted(s.source_topics),
            "repartition_source_topics": _internal(s.repartition_source_topics, counted),
            "repartition_sink_topics": sorted(s.repartition_sink_topics),
            "changelog_topics": _internal(s.state_changelog_topics, counted),
        }
        for s in (shown or sorted(group.topology.subtopologies, key=lambda s: s.subtopology_id))
    ]
    return {
        "epoch": group.topology.epoch,
        "ready": not_ready is None,
        "not_ready": not_ready,
        "subtopologies": subtopologies,
    }


def _end_offset(broker: Broker, topic: str, partition: int) -> int | None:
    info = broker.logs.topic(topic)
    if info is None or partition >= info.partitions:
        return None
    return int(broker.logs.get_log(topic, partition).high_watermark)


def _offsets(broker: Broker, group: StreamsGroup) -> list[dict[str, Any]]:
    """Every input partition of the topology (and any other the group committed), with its committed
    offset, end, lag and the member running its active task."""
    owner: dict[tuple[str, int], str] = {}
    inputs: set[tuple[str, int]] = set()
    for s in group.topology.subtopologies if group.topology is not None else ():
        for topic in s.input_topics():
            info = broker.logs.topic(topic)
            for partition in range(info.partitions if info is not None else 0):
                inputs.add((topic, partition))
                member = group.active_owner((s.subtopology_id, partition))
                if member is not None:
                    owner[topic, partition] = member
    committed = {(tp[0], tp[1]): o.offset for tp, o in group.offsets.items() if o.offset >= 0}
    rows = []
    for topic, partition in sorted(inputs | set(committed)):
        end = _end_offset(broker, topic, partition)
        offset = committed.get((topic, partition))
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "committed_offset": offset,
                "end_offset": end,
                "lag": None if end is None or offset is None else max(end - offset, 0),
                "member_id": owner.get((topic, partition)),
            }
        )
    return rows


def streams_row(broker: Broker, group: StreamsGroup) -> dict[str, Any]:
    """The group's line in the groups list."""
    lag = sum(row["lag"] or 0 for row in _offsets(broker, group))
    return {
        "group_id": group.group_id,
        "state": group.state.value,
        "protocol": "streams",
        "members": len(group.members),
        "generation": group.group_epoch,
        "lag": lag,
    }


def streams_rows(broker: Broker) -> list[dict[str, Any]]:
    return [streams_row(broker, g) for g in broker.coordinator.streams_groups()]


def streams_detail(broker: Broker, group_id: str) -> dict[str, Any] | None:
    group = broker.coordinator.get_streams_group(group_id)
    if group is None:
        return None
    (described,) = broker.coordinator.describe_streams_groups([group_id])
    if described.error is not ErrorCode.NONE:
        return None
    targets = {m.member_id: m.target_assignment for m in described.members}
    members = []
    for member in sorted(group.members.values(), key=lambda m: m.member_id):
        members.append(
            {
                "member_id": member.member_id,
                "group_instance_id": member.instance_id,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "process_id": member.process_id,
                "member_epoch": member.member_epoch,
                "previous_member_epoch": member.previous_member_epoch,
                "topology_epoch": member.topology_epoch,
                "status": member.state.name,
                "tasks": _roles(member.assigned),
                "pending_revocation": _roles(member.pending_revocation),
                "target": _roles(targets.get(member.member_id, DescribedAssignment((), (), ()))),
            }
        )
    offsets = _offsets(broker, group)
    return {
        "group_id": group_id,
        "type": "streams",
        "protocol_kind": "streams",
        "protocol": described.assignor_name,
        "state": described.state,
        "generation": described.group_epoch,
        "assignment_epoch": described.assignment_epoch,
        "topology": _topology(described.topology, group),
        "members": members,
        "offsets": offsets,
        "lag": sum(row["lag"] or 0 for row in offsets),
    }
