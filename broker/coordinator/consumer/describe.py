"""ConsumerGroupDescribe's view of a group (members with their current and target assignments)."""

from __future__ import annotations

from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.records import to_assignment
from kafkito.broker.coordinator.consumer.results import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroupDescription,
    ConsumerMemberDescription,
)
from kafkito.protocol.errors import ErrorCode


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
