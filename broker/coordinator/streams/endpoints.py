"""Endpoint-to-partitions for interactive queries (Kafka's EndpointToPartitionsManager): for each
member with a user endpoint, the source and repartition source partitions of its active tasks, and
those of its standby and warm-up tasks."""

from __future__ import annotations

from collections.abc import Mapping

from kafkito.broker.coordinator.streams.group import StreamsGroup
from kafkito.broker.coordinator.streams.member import StreamsGroupMember
from kafkito.broker.coordinator.streams.requests import EndpointToPartitions, TopicPartitions
from kafkito.broker.coordinator.streams.tasks import TaskMap, union


def _partitions(tasks: TaskMap, inputs: Mapping[str, Mapping[str, int]]) -> TopicPartitions:
    by_topic: dict[str, set[int]] = {}
    for subtopology, partitions in tasks.items():
        for topic, count in inputs.get(subtopology, {}).items():
            by_topic.setdefault(topic, set()).update(p for p in partitions if p < count)
    return tuple((t, tuple(sorted(p))) for t, p in sorted(by_topic.items()) if p)


def endpoint_to_partitions(member: StreamsGroupMember, group: StreamsGroup) -> EndpointToPartitions | None:
    if member.user_endpoint is None:
        return None
    inputs = group.configured.input_partitions if group.configured is not None else {}
    assigned = member.assigned
    return EndpointToPartitions(
        member.user_endpoint,
        _partitions(assigned.active, inputs),
        _partitions(union(assigned.standby, assigned.warmup), inputs),
    )


def all_endpoints(group: StreamsGroup, updated: StreamsGroupMember) -> tuple[EndpointToPartitions, ...]:
    """One entry per member with an endpoint (the updated member as it is after this heartbeat)."""
    out = []
    for member_id in sorted(group.members):
        if member_id == updated.member_id:
            continue
        entry = endpoint_to_partitions(group.members[member_id], group)
        if entry is not None:
            out.append(entry)
    mine = endpoint_to_partitions(updated, group)
    if mine is not None:
        out.append(mine)
    return tuple(out)
