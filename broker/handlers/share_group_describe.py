"""ShareGroupDescribe (77, KIP-932): epochs, assignor and members of share groups (v1, Kafka 4.1's
first stable version).

Each member's assignment is named here (topic id -> name); a topic deleted since is left out. An
empty group id is INVALID_GROUP_ID; an unknown id or a group of another type is GROUP_ID_NOT_FOUND
with Kafka's message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.describe import ShareGroupDescription, ShareMemberDescription
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.broker.security.supported_operations import GROUP_OPERATIONS_BITS
from kafkito.broker.security.supported_operations import NOT_REQUESTED as AUTHORIZED_OPERATIONS_OMITTED
from kafkito.protocol.errors import ErrorCode

_OFF = "The version of API is not supported."
API_KEY = 77
VERSIONS = (1, 1)


class ShareGroupDescribeRequestBody(Protocol):
    group_ids: Sequence[str]
    include_authorized_operations: bool


def _member(ctx: RequestContext, member: ShareMemberDescription) -> dict[str, Any]:
    topics = []
    for topic_id, partitions in member.assignment:
        info = ctx.topics.get_by_id(topic_id)
        if info is not None:
            topics.append(dict(topic_id=topic_id, topic_name=info.name, partitions=list(partitions)))
    return dict(
        member_id=member.member_id,
        rack_id=member.rack_id,
        member_epoch=member.member_epoch,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=list(member.subscribed_topic_names),
        assignment=dict(topic_partitions=topics),
    )


def _group(ctx: RequestContext, group: ShareGroupDescription, operations: int) -> dict[str, Any]:
    failed = group.error != ErrorCode.NONE
    return dict(
        error_code=group.error,
        error_message=group.error_message,
        group_id=group.group_id,
        group_state=group.state,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.assignor_name,
        members=[] if failed else [_member(ctx, m) for m in group.members],
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED if failed else operations,
    )


def handle(ctx: RequestContext, request: ShareGroupDescribeRequestBody) -> Any:
    operations = (
        GROUP_OPERATIONS_BITS if request.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    if share_groups_off(ctx):
        off = ShareGroupDescription
        described = [off(g, ErrorCode.UNSUPPORTED_VERSION, _OFF) for g in request.group_ids]
        return ctx.response(throttle_time_ms=0, groups=[_group(ctx, g, operations) for g in described])
    described = ctx.groups.describe_share_groups(list(request.group_ids))
    return ctx.response(throttle_time_ms=0, groups=[_group(ctx, g, operations) for g in described])
