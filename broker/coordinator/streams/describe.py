"""StreamsGroupDescribe's view of streams groups (Kafka's StreamsGroup.asDescribedGroup).

The topology is the group's epoch and, once it is ready, its subtopologies as configured against the
topics (internal topics with the partition counts the coordinator decided); null subtopologies while
the group has no ready topology. Members carry their current and target assignments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kafkito.broker.coordinator.streams.member import StreamsGroupMember
from kafkito.broker.coordinator.streams.tasks import TaskSet, WireTasks
from kafkito.broker.coordinator.streams.topology import TopicInfo
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime
    from kafkito.broker.coordinator.streams.group import StreamsGroup

ASSIGNOR_NAME = "sticky"


class DescribedSubtopology(NamedTuple):
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[TopicInfo, ...]
    repartition_source_topics: tuple[TopicInfo, ...]


class DescribedTopology(NamedTuple):
    epoch: int
    subtopologies: tuple[DescribedSubtopology, ...] | None


class DescribedAssignment(NamedTuple):
    active: WireTasks
    standby: WireTasks
    warmup: WireTasks

    @classmethod
    def of(cls, tasks: TaskSet) -> DescribedAssignment:
        return cls(*tasks.wire())


class DescribedMember(NamedTuple):
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None
    client_tags: tuple[tuple[str, str], ...]
    assignment: DescribedAssignment
    target_assignment: DescribedAssignment


class StreamsGroupDescription(NamedTuple):
    group_id: str
    error: ErrorCode
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    topology: DescribedTopology | None = None
    members: tuple[DescribedMember, ...] = ()
    assignor_name: str | None = None


def describe_streams_group(rt: Runtime, group_id: str) -> StreamsGroupDescription:
    """GROUP_ID_NOT_FOUND for unknown ids and for groups of another type, with Kafka's messages."""
    if not group_id:
        return StreamsGroupDescription(group_id, ErrorCode.INVALID_GROUP_ID)
    if rt.sink.is_loading(group_id):
        return StreamsGroupDescription(group_id, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    group = rt.streams_groups.get(group_id)
    if group is None:
        other = group_id in rt.consumer_groups or group_id in rt.groups or group_id in rt.share_groups
        message = f"Group {group_id} is not a streams group." if other else f"Group {group_id} not found."
        return StreamsGroupDescription(group_id, ErrorCode.GROUP_ID_NOT_FOUND, message)
    members = tuple(_member(group, m) for m in sorted(group.members.values(), key=lambda m: m.member_id))
    return StreamsGroupDescription(
        group_id,
        ErrorCode.NONE,
        None,
        group.state.value,
        group.group_epoch,
        group.assignment_epoch,
        _topology(group),
        members,
        ASSIGNOR_NAME,
    )


def _member(group: StreamsGroup, member: StreamsGroupMember) -> DescribedMember:
    return DescribedMember(
        member.member_id,
        member.member_epoch,
        member.instance_id,
        member.rack_id,
        member.client_id,
        member.client_host,
        member.topology_epoch,
        member.process_id,
        member.user_endpoint,
        member.client_tags,
        DescribedAssignment.of(member.assigned),
        DescribedAssignment.of(group.target.get(member.member_id, TaskSet.empty())),
    )


def _topology(group: StreamsGroup) -> DescribedTopology | None:
    topology = group.topology
    if topology is None:
        return None
    configured = group.configured
    if configured is None or not configured.is_ready or configured.epoch != topology.epoch:
        return DescribedTopology(topology.epoch, None)
    subtopologies = []
    for s in sorted(topology.subtopologies, key=lambda s: s.subtopology_id):
        inputs = configured.input_partitions.get(s.subtopology_id, {})
        tasks = configured.task_counts.get(s.subtopology_id, 0)
        subtopologies.append(
            DescribedSubtopology(
                s.subtopology_id,
                tuple(sorted(s.source_topics)),
                tuple(sorted(s.repartition_sink_topics)),
                tuple(sorted((t._replace(partitions=tasks) for t in s.state_changelog_topics), key=_name)),
                tuple(
                    sorted(
                        (
                            t._replace(partitions=inputs.get(t.name, t.partitions))
                            for t in s.repartition_source_topics
                        ),
                        key=_name,
                    )
                ),
            )
        )
    return DescribedTopology(topology.epoch, tuple(subtopologies))


def _name(topic: TopicInfo) -> str:
    return topic.name
