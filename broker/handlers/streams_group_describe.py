"""StreamsGroupDescribe (89, KIP-1071): epochs, topology and members of streams groups.

v0 Kafka 4.1's first stable version; v1 (KIP-1331, KIP-1357) asks for the topology description and
answers the assignor's name: kafkito has no topology description plugin, so a description asked for is
NOT_STORED (1) and none is asked NOT_REQUESTED (0), with no description. An empty group id is
INVALID_GROUP_ID; an unknown id or a group of another type GROUP_ID_NOT_FOUND with Kafka's message.
With `streams.version` at 0 every group is UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.streams.describe import (
    DescribedAssignment,
    DescribedMember,
    DescribedTopology,
    StreamsGroupDescription,
)
from kafkito.broker.coordinator.streams.tasks import WireTasks
from kafkito.broker.coordinator.streams.topology import TopicInfo
from kafkito.broker.handlers.streams_group_heartbeat import streams_groups_off
from kafkito.broker.security.supported_operations import GROUP_OPERATIONS_BITS
from kafkito.broker.security.supported_operations import NOT_REQUESTED as AUTHORIZED_OPERATIONS_OMITTED
from kafkito.protocol.errors import ErrorCode

API_KEY = 89
VERSIONS = (0, 1)
_OFF = "The version of API is not supported."
_NOT_REQUESTED, _NOT_STORED = 0, 1


class StreamsGroupDescribeRequestBody(Protocol):
    group_ids: Sequence[str]
    include_authorized_operations: bool
    include_topology_description: bool  # v1+ (false below)


def _tasks(tasks: WireTasks) -> list[dict[str, Any]]:
    return [dict(subtopology_id=s, partitions=list(p)) for s, p in tasks]


def _assignment(a: DescribedAssignment) -> dict[str, Any]:
    return dict(active_tasks=_tasks(a.active), standby_tasks=_tasks(a.standby), warmup_tasks=_tasks(a.warmup))


def _topic_info(t: TopicInfo) -> dict[str, Any]:
    return dict(
        name=t.name,
        partitions=t.partitions,
        replication_factor=t.replication_factor,
        topic_configs=[dict(key=k, value=v) for k, v in t.configs],
    )


def _topology(topology: DescribedTopology | None) -> dict[str, Any] | None:
    if topology is None:
        return None
    subtopologies = None
    if topology.subtopologies is not None:
        subtopologies = [
            dict(
                subtopology_id=s.subtopology_id,
                source_topics=list(s.source_topics),
                repartition_sink_topics=list(s.repartition_sink_topics),
                state_changelog_topics=[_topic_info(t) for t in s.state_changelog_topics],
                repartition_source_topics=[_topic_info(t) for t in s.repartition_source_topics],
            )
            for s in topology.subtopologies
        ]
    return dict(epoch=topology.epoch, subtopologies=subtopologies)


def _member(m: DescribedMember) -> dict[str, Any]:
    endpoint = m.user_endpoint
    return dict(
        member_id=m.member_id,
        member_epoch=m.member_epoch,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        client_id=m.client_id,
        client_host=m.client_host,
        topology_epoch=m.topology_epoch,
        process_id=m.process_id,
        user_endpoint=None if endpoint is None else dict(host=endpoint[0], port=endpoint[1]),
        client_tags=[dict(key=k, value=v) for k, v in m.client_tags],
        task_offsets=[],
        task_end_offsets=[],
        assignment=_assignment(m.assignment),
        target_assignment=_assignment(m.target_assignment),
        is_classic=False,
    )


def _group(group: StreamsGroupDescription, operations: int, description_status: int) -> dict[str, Any]:
    failed = group.error != ErrorCode.NONE
    return dict(
        error_code=group.error,
        error_message=group.error_message,
        group_id=group.group_id,
        group_state=group.state,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        topology=_topology(group.topology),
        members=[] if failed else [_member(m) for m in group.members],
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED if failed else operations,
        topology_description=None,
        topology_description_status=_NOT_REQUESTED if failed else description_status,
        assignor_name=None if failed else group.assignor_name,
    )


def handle(ctx: RequestContext, request: StreamsGroupDescribeRequestBody) -> Any:
    operations = (
        GROUP_OPERATIONS_BITS if request.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    wants_description = ctx.version >= 1 and request.include_topology_description
    status = _NOT_STORED if wants_description else _NOT_REQUESTED
    if streams_groups_off(ctx):
        off = StreamsGroupDescription
        described = [off(g, ErrorCode.UNSUPPORTED_VERSION, _OFF) for g in request.group_ids]
    else:
        described = ctx.groups.describe_streams_groups(list(request.group_ids))
    return ctx.response(throttle_time_ms=0, groups=[_group(g, operations, status) for g in described])
