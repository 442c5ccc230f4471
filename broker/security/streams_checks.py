"""The ACL checks of the streams group APIs (KIP-1071), as Kafka 4.4's KafkaApis makes them.

StreamsGroupHeartbeat: READ on the group (GROUP_AUTHORIZATION_FAILED); a topology naming a Kafka
internal topic or an invalid topic name is STREAMS_INVALID_TOPOLOGY; DESCRIBE on every topic the
topology names (sources, repartition sinks and sources, changelogs), else TOPIC_AUTHORIZATION_FAILED for
the whole request. The internal topics the coordinator asks for are created only with CREATE on the
cluster or on each of them (the handler's part: `unauthorized_to_create`). StreamsGroupDescribe:
DESCRIBE on each group, and a described group whose topology names a topic the principal may not
DESCRIBE is TOPIC_AUTHORIZATION_FAILED. StreamsGroupTopologyDescriptionUpdate: READ on the group.
While streams groups are off (`streams.version` 0) the handlers answer UNSUPPORTED_VERSION first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.streams.validate import invalid_topic_names, topology_topics
from kafkito.broker.security.acls import AclOperation as Op
from kafkito.broker.security.acls import ResourceType as Res
from kafkito.broker.security.authorized_operations import with_group_operations
from kafkito.broker.security.request_checks import (
    GROUP_DENIED,
    TOPIC_DENIED,
    Check,
    Handler,
    auth,
    refuse,
    strings,
    then,
)
from kafkito.protocol.errors import ErrorCode

DESCRIBE_DENIED_MESSAGE = "The described group uses topics that the client is not authorized to describe."


def _off(ctx: RequestContext) -> bool:
    from kafkito.broker.handlers.streams_group_heartbeat import streams_groups_off

    return streams_groups_off(ctx)


def heartbeat(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if _off(ctx):
        return handler.handle(ctx, request)
    authorizer = auth(ctx)
    if not authorizer.authorize(ctx, Op.READ, Res.GROUP, request.group_id):
        return _refused(ctx, request, GROUP_DENIED)
    if request.topology is not None:
        names = topology_topics(request.topology.subtopologies)
        message = invalid_topic_names(names)
        if message is not None:
            return _refused(ctx, request, ErrorCode.STREAMS_INVALID_TOPOLOGY, message)
        if any(not authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, n) for n in names):
            return _refused(ctx, request, TOPIC_DENIED)
    return handler.handle(ctx, request)


def _refused(ctx: RequestContext, request: Any, error: ErrorCode, message: str | None = None) -> Any:
    response = refuse(ctx, request, error, message)
    response.status = []  # Kafka's error answer: the generated defaults, an empty status list
    return response


def unauthorized_to_create(ctx: RequestContext, topics: Sequence[str]) -> list[str]:
    """The internal topics the principal may not create: none with CREATE on the cluster, else those
    without CREATE on the topic. No authorizer: none."""
    authorizer = ctx.authorizer
    if authorizer is None or authorizer.authorize_cluster(ctx, Op.CREATE):
        return []
    return [t for t in topics if not authorizer.authorize(ctx, Op.CREATE, Res.TOPIC, t)]


def _describe_topics(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if _off(ctx):
        return handler.handle(ctx, request)
    authorizer = auth(ctx)

    def hide(response: Any) -> None:
        for group in response.groups:
            if group.error_code != 0 or group.topology is None:
                continue
            names = topology_topics(group.topology.subtopologies)
            if all(authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, n) for n in names):
                continue
            group.error_code, group.error_message = TOPIC_DENIED, DESCRIBE_DENIED_MESSAGE
            group.group_state, group.group_epoch, group.assignment_epoch = "", 0, 0
            group.topology, group.members, group.assignor_name = None, [], None
            group.authorized_operations = -(2**31)

    return then(handler.handle(ctx, request), hide)


def _describe(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if _off(ctx):
        return handler.handle(ctx, request)
    groups = strings("group_ids", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    return groups(ctx, request, _Then(handler))


class _Then:
    """The handler behind the topic check of described groups."""

    __slots__ = ("handler",)

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        return _describe_topics(ctx, request, self.handler)


def _topology_description_update(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if _off(ctx) or auth(ctx).authorize(ctx, Op.READ, Res.GROUP, request.group_id):
        return handler.handle(ctx, request)
    return refuse(ctx, request, GROUP_DENIED)


CHECKS: dict[int, Check] = {
    88: heartbeat,  # StreamsGroupHeartbeat
    89: with_group_operations(_describe),  # StreamsGroupDescribe
    93: _topology_description_update,  # StreamsGroupTopologyDescriptionUpdate
}
