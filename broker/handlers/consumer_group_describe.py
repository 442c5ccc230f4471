"""ConsumerGroupDescribe (69, KIP-848): epochs, assignor and members of consumer groups.

Each member's current and target assignments are named here (topic id -> name, from the topics
service); a topic deleted since is left out, as Kafka leaves out a topic missing from its metadata.
v1 (KIP-1099): the member type (0 classic, 1 consumer); the request is unchanged. An empty group id
is INVALID_GROUP_ID; a group that cannot be described carries only its id, error and message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.consumer.results import (
    ConsumerGroupDescription,
    ConsumerMemberDescription,
    WireAssignment,
)
from kafkito.broker.security.supported_operations import GROUP_OPERATIONS_BITS, NOT_REQUESTED
from kafkito.protocol.errors import ErrorCode

API_KEY = 69
VERSIONS = (0, 1)

AUTHORIZED_OPERATIONS_OMITTED = NOT_REQUESTED  # the field is a plain int32 here


class ConsumerGroupDescribeRequestBody(Protocol):
    """The fields of ConsumerGroupDescribeRequest (protocol/schemas) this handler reads."""

    group_ids: Sequence[str]
    include_authorized_operations: bool


def _assignment(ctx: RequestContext, assignment: WireAssignment) -> dict[str, Any]:
    topics = []
    for topic_id, partitions in assignment:
        info = ctx.topics.get_by_id(topic_id)
        if info is not None:
            topics.append(dict(topic_id=topic_id, topic_name=info.name, partitions=list(partitions)))
    return dict(topic_partitions=topics)


def _member(ctx: RequestContext, member: ConsumerMemberDescription) -> dict[str, Any]:
    return dict(
        member_id=member.member_id,
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        member_epoch=member.member_epoch,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=list(member.subscribed_topic_names),
        # Kafka reports a member without a regex as "" (its member record's default), not null
        subscribed_topic_regex=member.subscribed_topic_regex or "",
        assignment=_assignment(ctx, member.assignment),
        target_assignment=_assignment(ctx, member.target_assignment),
        member_type=member.member_type,
    )


def _error(group_id: str, error: ErrorCode, message: str | None) -> dict[str, Any]:
    """A group Kafka could not describe: its id, the error and its message, every other field at its
    default (as Kafka answers)."""
    return dict(
        error_code=error,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        assignor_name="",
        members=[],
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )


def _group(ctx: RequestContext, group: ConsumerGroupDescription, operations: int) -> dict[str, Any]:
    if group.error != ErrorCode.NONE:
        return _error(group.group_id, group.error, group.error_message)
    return dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        group_id=group.group_id,
        group_state=group.state,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.assignor_name,
        members=[_member(ctx, m) for m in group.members],
        authorized_operations=operations,
    )


def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequestBody) -> Any:
    operations = (
        GROUP_OPERATIONS_BITS if request.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    # An empty group id is refused before any group is looked up, as Kafka's coordinator service does.
    described = iter(ctx.groups.describe_consumer_groups([g for g in request.group_ids if g]))
    groups = [
        _group(ctx, next(described), operations) if g else _error("", ErrorCode.INVALID_GROUP_ID, None)
        for g in request.group_ids
    ]
    return ctx.response(throttle_time_ms=0, groups=groups)
