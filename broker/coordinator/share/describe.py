"""ShareGroupDescribe's view of share groups, and the ListGroups rows of share groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kafkito.broker.coordinator.share.records import Assignment
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime

ASSIGNOR_NAME = "simple"


class ShareMemberDescription(NamedTuple):
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    assignment: Assignment


class ShareGroupDescription(NamedTuple):
    group_id: str
    error: ErrorCode
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ShareMemberDescription, ...] = ()


def describe_share_group(rt: Runtime, group_id: str) -> ShareGroupDescription:
    """GROUP_ID_NOT_FOUND for unknown ids and for groups of another type."""
    if not group_id:
        return ShareGroupDescription(group_id, ErrorCode.INVALID_GROUP_ID)
    if rt.sink.is_loading(group_id):
        return ShareGroupDescription(group_id, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    group = rt.share_groups.get(group_id)
    if group is None:
        other = group_id in rt.consumer_groups or group_id in rt.groups
        message = f"Group {group_id} is not a share group." if other else f"Group {group_id} not found."
        return ShareGroupDescription(group_id, ErrorCode.GROUP_ID_NOT_FOUND, message)
    members = tuple(
        ShareMemberDescription(
            m.member_id,
            m.rack_id,
            m.member_epoch,
            m.client_id,
            m.client_host,
            m.subscribed_topic_names,
            m.assigned,
        )
        for m in sorted(group.members.values(), key=lambda m: m.member_id)
    )
    return ShareGroupDescription(
        group_id,
        ErrorCode.NONE,
        None,
        group.state.value,
        group.group_epoch,
        group.assignment_epoch,
        ASSIGNOR_NAME,
        members,
    )
