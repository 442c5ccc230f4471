"""DescribeGroups (15): state, protocol and members of classic groups.

v1 throttle time; v2 no change; v3 authorized operations (KIP-430); v4 group_instance_id of members;
v5 flexible; v6 (KIP-1043) an unknown group, or one that is not a classic group (a KIP-848 consumer
group), is GROUP_ID_NOT_FOUND with Kafka's message. Before v6 both are described as Dead, no error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.results import DescribedGroup
from kafkito.broker.security.supported_operations import GROUP_OPERATIONS
from kafkito.protocol.errors import ErrorCode

API_KEY = 15
VERSIONS = (0, 6)

DEAD = "Dead"
GROUP_ID_NOT_FOUND_VERSION = 6


class DescribeGroupsRequestBody(Protocol):
    """The fields of kafka-python's DescribeGroupsRequest this handler reads."""

    groups: Sequence[str]
    include_authorized_operations: bool  # v3+


def _is_absent(described: DescribedGroup) -> bool:
    """No live classic group by that id (the coordinator says Dead, or that it is not found)."""
    if described.error == ErrorCode.GROUP_ID_NOT_FOUND:
        return True
    return described.error == ErrorCode.NONE and described.summary.state == DEAD


def _absent(
    ctx: RequestContext, group_id: str, consumer_group_ids: frozenset[str], operations: set[int] | None
) -> dict[str, Any]:
    """A group described as Kafka 4 describes one that is not a live classic group (before v6 with no
    error, so with the authorized operations asked for, as Kafka fills them for every group it answers
    without an error)."""
    fields: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        group_id=group_id,
        group_state=DEAD,
        protocol_type="",
        protocol_data="",
        members=[],
        authorized_operations=operations,
    )
    if ctx.version >= GROUP_ID_NOT_FOUND_VERSION:
        fields["error_code"] = ErrorCode.GROUP_ID_NOT_FOUND
        fields["authorized_operations"] = None
        if group_id in consumer_group_ids:
            fields["error_message"] = f"Group {group_id} is not a classic group."
        else:
            fields["error_message"] = f"Group {group_id} not found."
    return fields


def _consumer_group_ids(ctx: RequestContext, group_ids: list[str]) -> frozenset[str]:
    """Which of these ids name a KIP-848 consumer group, a share group or a streams group."""
    if not group_ids:
        return frozenset()
    groups = ctx.groups
    consumer = {d.group_id for d in groups.describe_consumer_groups(group_ids) if d.error == ErrorCode.NONE}
    # Share groups (KIP-932) are not classic groups either.
    share = {d.group_id for d in groups.describe_share_groups(group_ids) if d.error == ErrorCode.NONE}
    # Nor are streams groups (KIP-1071).
    streams = {g for g in group_ids if groups.get_streams_group(g) is not None}
    return frozenset(consumer | share | streams)


def _described(d: DescribedGroup, operations: set[int] | None) -> dict[str, Any]:
    return dict(
        error_code=d.error,
        group_id=d.group_id,
        group_state=d.summary.state,
        protocol_type=d.summary.protocol_type,
        protocol_data=d.summary.protocol,
        members=[
            dict(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata,
                member_assignment=m.assignment,
            )
            for m in d.summary.members
        ],
        authorized_operations=operations,
    )


def handle(ctx: RequestContext, request: DescribeGroupsRequestBody) -> Any:
    operations = None  # the codec encodes None as Kafka's "not requested" (INT32_MIN)
    if ctx.version >= 3 and request.include_authorized_operations:
        operations = {int(op) for op in GROUP_OPERATIONS}  # no authorizer: every one
    described = ctx.groups.describe_groups(request.groups)
    absent = [d.group_id for d in described if _is_absent(d)]
    consumer_ids = _consumer_group_ids(ctx, absent)
    groups = [
        _absent(ctx, d.group_id, consumer_ids, operations) if _is_absent(d) else _described(d, operations)
        for d in described
    ]
    return ctx.response(throttle_time_ms=0, groups=groups)
