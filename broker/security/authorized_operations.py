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
from kafkito.broker.security.request_checks import Check, Handler, auth, then

TOPIC_OPERATIONS = (Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS,
                    Op.ALTER_CONFIGS)  # fmt: skip
GROUP_OPERATIONS = (Op.READ, Op.DELETE, Op.DESCRIBE)
CLUSTER_OPERATIONS = (Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS,
                      Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE)  # fmt: skip


def cluster_operations(ctx: RequestContext) -> set[int]:
    return auth(ctx).operations(ctx, Res.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS)


def put(holder: Any, operations: set[int]) -> None:
    """Set `holder.authorized_operations`: a set of codes for a `bitfield` field, else the int32 bits."""
    field = type(holder)._struct.fields["authorized_operations"]
    if getattr(field, "_type_str", "") == "bitfield":
        holder.authorized_operations = operations
    else:
        holder.authorized_operations = sum(1 << op for op in operations)


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
                    if topic.error_code == 0 and topic.name is not None:
                        put(topic, authorizer.operations(ctx, Res.TOPIC, topic.name, TOPIC_OPERATIONS))

        return then(check(ctx, request, handler), change)

    return fill


def describe_cluster(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DescribeCluster needs no ACL; its cluster operations are the principal's, when asked for."""
    result = handler.handle(ctx, request)
    if not request.include_cluster_authorized_operations:
        return result
    operations = cluster_operations(ctx)
    return then(result, lambda response: put(response, operations))
