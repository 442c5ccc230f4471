"""The `authorized_operations` fields of describing responses, as the principal's ACLs allow them.

A handler fills them as if every operation were allowed when they are asked for (no authorizer); with
an authorizer, `fill_*` replace them with the operations this principal may do (Kafka's bit field: one
bit per operation code), as Kafka's handlers compute them (denials not logged).
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import CLUSTER_NAME
from kafkito.broker.security.acls import AclOperation as Op
from kafkito.broker.security.acls import ResourceType as Res
from kafkito.broker.security.request_checks import TOPIC_DENIED, Check, Handler, auth, then
from kafkito.broker.security.supported_operations import (
    CLUSTER_OPERATIONS,
    GROUP_OPERATIONS,
    TOPIC_OPERATIONS,
    bits,
)


def cluster_operations(ctx: RequestContext) -> set[int]:
    """The principal's cluster operations; none at all unless it may DESCRIBE the cluster (Kafka's
    Metadata and DescribeCluster answer 0 then)."""
    operations = auth(ctx).operations(ctx, Res.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS)
    return operations if Op.DESCRIBE in operations else set()


def put(holder: Any, operations: set[int]) -> None:
    """Set `holder.authorized_operations`: a set of codes for a `bitfield` field, else the int32 bits."""
    field = type(holder)._struct.fields["authorized_operations"]
    if getattr(field, "_type_str", "") == "bitfield":
        holder.authorized_operations = operations
    else:
        holder.authorized_operations = bits(operations)


def with_group_operations(check: Check) -> Check:
    """`check`, then each described group's operations (DescribeGroups, Consumer/ShareGroupDescribe)."""

    def fill(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        if not getattr(request, "include_authorized_operations", False):
            return check(ctx, request, handler)
        authorizer = auth(ctx)

        def change(response: Any) -> None:
            for group in response.groups:
                if group.error_code == 0:
                    put(group, authorizer.operations(ctx, Res.GROUP, group.group_id, GROUP_OPERATIONS))

        return then(check(ctx, request, handler), change)

    return fill


def with_metadata_operations(check: Check) -> Check:
    """`check`, then Metadata's topic (v8+) and cluster (v8-v10) operations, when asked for."""

    def fill(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        topics = ctx.version >= 8 and request.include_topic_authorized_operations
        cluster = 8 <= ctx.version <= 10 and request.include_cluster_authorized_operations
        if not (topics or cluster):
            return check(ctx, request, handler)
        authorizer = auth(ctx)

        def change(response: Any) -> None:
            if cluster:
                put(response, cluster_operations(ctx))
            if topics:
                for topic in response.topics:
                    # Every topic it may describe, known or not (refused ones keep "not requested").
                    if topic.error_code != TOPIC_DENIED and topic.name is not None:
                        put(topic, authorizer.operations(ctx, Res.TOPIC, topic.name, TOPIC_OPERATIONS))

        return then(check(ctx, request, handler), change)

    return fill


def with_topic_partitions_operations(check: Check) -> Check:
    """`check`, then DescribeTopicPartitions' topic operations: the principal's, for each topic it may
    describe (those refused TOPIC_AUTHORIZATION_FAILED keep Kafka's "not requested")."""

    def fill(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        authorizer = auth(ctx)

        def change(response: Any) -> None:
            for topic in response.topics:
                if topic.error_code != TOPIC_DENIED:
                    operations = authorizer.operations(ctx, Res.TOPIC, topic.name, TOPIC_OPERATIONS)
                    topic.topic_authorized_operations = bits(operations)

        return then(check(ctx, request, handler), change)

    return fill


def describe_cluster(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DescribeCluster needs no ACL; its cluster operations are the principal's, when asked for."""
    result = handler.handle(ctx, request)
    if not request.include_cluster_authorized_operations:
        return result
    operations = cluster_operations(ctx)
    return then(result, lambda response: put(response, operations))
