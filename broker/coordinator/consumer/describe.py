"""ConsumerGroupDescribe's view of a group (members with their current and target assignments)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.consumer.assignors import Assignor
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.records import to_assignment
from kafkito.broker.coordinator.consumer.results import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroupDescription,
    ConsumerMemberDescription,
)
from kafkito.broker.coordinator.consumer.target import preferred_assignor
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime


def describe_group(
    rt: Runtime, group_id: str, assignors: Mapping[str, Assignor], default: Assignor
) -> ConsumerGroupDescription:
    """ConsumerGroupDescribe of one id: GROUP_ID_NOT_FOUND for unknown ids and for classic and share groups.
    The assignor named is the one the group uses (the most asked for, else the default)."""
    error = rt.validate_group_status(group_id, allow_empty_id=True)
    group = rt.consumer_groups.get(group_id)
    if error is not None:
        return not_found(group_id)._replace(error=error, error_message=None)
    if group is None:
        other = group_id in rt.groups or group_id in rt.share_groups or group_id in rt.streams_groups
        return not_found(group_id, f"Group {group_id} is not a consumer group." if other else None)
    return describe(group, preferred_assignor(group.members, assignors, default).name)


def describe(group: ConsumerGroup, assignor_name: str) -> ConsumerGroupDescription:
    members = tuple(
        ConsumerMemberDescription(
            member.member_id,
            member.instance_id,
            member.rack_id,
            member.member_epoch,
            member.client_id,
            member.client_host,
            member.subscribed_topic_names,
            member.subscribed_topic_regex,
            to_assignment(member.assigned),
            to_assignment(group.target.get(member.member_id, {})),
            MEMBER_TYPE_CLASSIC if member.classic_member is not None else MEMBER_TYPE_CONSUMER,
        )
        for member in group.members.values()
    )
    return ConsumerGroupDescription(
        group.group_id,
        ErrorCode.NONE,
        None,
        group.state.value,
        group.group_epoch,
        group.assignment_epoch,
        assignor_name,
        members,
    )


def not_found(group_id: str, message: str | None = None) -> ConsumerGroupDescription:
    return ConsumerGroupDescription(
        group_id,
        ErrorCode.GROUP_ID_NOT_FOUND,
        message or f"Group {group_id} not found.",
        "Dead",
        -1,
        -1,
        "",
        (),
    )
