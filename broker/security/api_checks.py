"""Which operations on which resources each API needs, as Kafka's request handlers authorize them.

`guarded(handler)` wraps an API's handler when the broker has an authorizer; `CHECKS` holds each API's
check (built from `request_checks`' blocks; the group and transaction APIs' are in `group_checks`).
APIs absent from the table need no ACL (ApiVersions, SASL); DescribeCluster only reports the
principal's cluster operations. Fetch and OffsetCommit encode their own responses: their handlers refuse the
topics themselves (`authorizer.denied`); here only a replica's Fetch is checked (CLUSTER_ACTION).
An entry that names its topic by id (Produce v13, OffsetFetch v10, TxnOffsetCommit v6) is decided by
the name its id resolves to (`request_checks.topic_name`), before its handler runs; an id no topic has
is left to the handler, which answers UNKNOWN_TOPIC_ID whatever the ACLs, as Kafka 4.4 does.
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import AclOperation as Op
from kafkito.broker.security.acls import ResourceType as Res
from kafkito.broker.security.authorized_operations import (
    describe_cluster,
    with_group_operations,
    with_metadata_operations,
    with_topic_partitions_operations,
)
from kafkito.broker.security.group_checks import (
    add_partitions_to_txn,
    consumer_group_heartbeat,
    describe_share_group_offsets,
    describe_transactions,
    find_coordinator,
    init_producer_id,
    list_groups,
    list_transactions,
    offset_fetch,
    share_topics,
    txn_offset_commit,
)
from kafkito.broker.security.request_checks import (
    CLUSTER_DENIED,
    DENIED_MESSAGE,
    GROUP_DENIED,
    TOPIC_DENIED,
    TXN_DENIED,
    Check,
    Handler,
    auth,
    chain,
    cluster,
    group_check,
    keep_only,
    refuse,
    split,
    split_topics,
    strings,
    then,
    topic_check,
    topic_name,
    txn_check,
)
from kafkito.broker.security.streams_checks import CHECKS as STREAMS_CHECKS
from kafkito.protocol.errors import ErrorCode


class Guarded:
    """A handler whose requests pass their API's authorization check first."""

    __slots__ = ("API_KEY", "VERSIONS", "_handler")

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.API_KEY: int = getattr(handler, "API_KEY", -1)
        self.VERSIONS: tuple[int, int] = getattr(handler, "VERSIONS", (0, 0))

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        check = CHECKS.get(ctx.header.api_key)
        if check is None:
            return self._handler.handle(ctx, request)
        return check(ctx, request, self._handler)


def guarded(handler: Handler) -> Guarded:
    return Guarded(handler)


# -- topics ----------------------------------------------------------------------------------------


def _fetch(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """A follower's fetch needs CLUSTER_ACTION; a consumer's topics are refused by the handler."""
    replica = getattr(request, "replica_id", -1)
    if replica is not None and replica >= 0 and not auth(ctx).authorize_cluster(ctx, Op.CLUSTER_ACTION):
        return refuse(ctx, request, TOPIC_DENIED)
    return handler.handle(ctx, request)


def _offset_for_leader_epoch(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    replica = getattr(request, "replica_id", -1) if ctx.version >= 3 else -1
    if replica >= 0:
        if auth(ctx).authorize_cluster(ctx, Op.CLUSTER_ACTION):
            return handler.handle(ctx, request)
        return refuse(ctx, request, CLUSTER_DENIED)
    return split(ctx, request, handler, "topics", "topics", topic_check(Op.DESCRIBE, "topic")(ctx))


def _metadata(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """Listing every topic shows only those the principal may DESCRIBE; a named topic it may not, or one
    that does not exist and that it may not create, is TOPIC_AUTHORIZATION_FAILED."""
    authorizer = auth(ctx)
    if request.topics is None or (ctx.version == 0 and not request.topics):
        return then(
            handler.handle(ctx, request),
            lambda response: keep_only(
                response, "topics", lambda t: authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, t.name)
            ),
        )
    creates = ctx.configs.config.auto_create_topics_enable and (
        ctx.version < 4 or request.allow_auto_topic_creation
    )
    may_create_all: list[bool] = []  # decided once, when a topic to create is met

    def decide(entry: Any) -> ErrorCode | None:
        name = topic_name(ctx, entry)
        if name is None:
            return None
        if not authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, name):
            return TOPIC_DENIED
        if not creates or ctx.topics.get(name) is not None:
            return None
        if not may_create_all:
            may_create_all.append(authorizer.authorize_cluster(ctx, Op.CREATE))
        if may_create_all[0] or authorizer.authorize(ctx, Op.CREATE, Res.TOPIC, name):
            return None
        return TOPIC_DENIED

    return split(ctx, request, handler, "topics", "topics", decide)


def _by_topic(op: Op, field: str = "topics", out: str = "topics") -> Check:
    """Like `split_topics`, for entries that may name their topic by id."""

    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        authorizer = auth(ctx)

        def decide(entry: Any) -> ErrorCode | None:
            name = topic_name(ctx, entry)
            ok = name is None or authorizer.authorize(ctx, op, Res.TOPIC, name)
            return None if ok else TOPIC_DENIED

        return split(ctx, request, handler, field, out, decide)

    return check


def _create_topics(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """CREATE on the cluster or each topic; from v5 a created topic's configs are shown only to a
    principal that may DESCRIBE_CONFIGS it (else its topic_config_error_code says why)."""
    authorizer = auth(ctx)
    if authorizer.authorize_cluster(ctx, Op.CREATE):
        result = handler.handle(ctx, request)
    else:
        result = split_topics("topics", "topics", Op.CREATE)(ctx, request, handler)
    if ctx.version < 5:
        return result

    def hide_configs(response: Any) -> None:
        for topic in response.topics:
            if topic.error_code == 0 and not authorizer.authorize(
                ctx, Op.DESCRIBE_CONFIGS, Res.TOPIC, topic.name, log_denied=False
            ):
                topic.topic_config_error_code, topic.configs = TOPIC_DENIED, []

    return then(result, hide_configs)


def _delete_topics(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if ctx.version >= 6:
        return _by_topic(Op.DELETE, "topics", "responses")(ctx, request, handler)
    return strings("topic_names", "responses", Res.TOPIC, Op.DELETE, TOPIC_DENIED, "name")(
        ctx, request, handler
    )


def _describe_topic_partitions(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    if request.topics:
        return split_topics("topics", "topics", Op.DESCRIBE)(ctx, request, handler)
    return then(
        handler.handle(ctx, request),
        lambda response: keep_only(
            response, "topics", lambda t: authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, t.name)
        ),
    )


# -- transactions ----------------------------------------------------------------------------------


def _produce(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    txn = request.transactional_id if ctx.version >= 3 else None
    if txn is not None and not authorizer.authorize(ctx, Op.WRITE, Res.TRANSACTIONAL_ID, txn):
        return refuse(ctx, request, TXN_DENIED)
    return split(ctx, request, handler, "topic_data", "responses", topic_check(Op.WRITE)(ctx))


# -- configs ---------------------------------------------------------------------------------------

# Config resource types: 2 topic, 4 broker, 8 broker logger, 16 client metrics, 32 group.
_CONFIG_RESOURCES = {2: (Res.TOPIC, TOPIC_DENIED), 32: (Res.GROUP, GROUP_DENIED)}


def _configs(op: Op, out: str) -> Check:
    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        authorizer = auth(ctx)

        def decide(resource: Any) -> ErrorCode | None:
            kind, error = _CONFIG_RESOURCES.get(resource.resource_type, (Res.CLUSTER, CLUSTER_DENIED))
            name = resource.resource_name if kind is not Res.CLUSTER else "kafka-cluster"
            return None if authorizer.authorize(ctx, op, kind, name) else error

        return split(ctx, request, handler, "resources", out, decide)

    return check


CHECKS: dict[int, Check] = {
    0: _produce,
    1: _fetch,
    2: split_topics("topics", "topics", Op.DESCRIBE),  # ListOffsets
    3: with_metadata_operations(_metadata),
    8: group_check(Op.READ),  # OffsetCommit (its handler refuses the topics it may not READ)
    9: offset_fetch,
    10: find_coordinator,
    11: group_check(Op.READ),  # JoinGroup
    12: group_check(Op.READ),  # Heartbeat
    13: group_check(Op.READ),  # LeaveGroup
    14: group_check(Op.READ),  # SyncGroup
    15: with_group_operations(  # DescribeGroups
        strings("groups", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    16: list_groups,
    19: _create_topics,
    20: _delete_topics,
    21: split_topics("topics", "topics", Op.DELETE),  # DeleteRecords
    22: init_producer_id,
    23: _offset_for_leader_epoch,
    24: add_partitions_to_txn,
    25: chain(txn_check(), group_check(Op.READ)),  # AddOffsetsToTxn
    26: txn_check(),  # EndTxn
    28: txn_offset_commit,
    29: cluster(Op.DESCRIBE),  # DescribeAcls
    30: cluster(Op.ALTER),  # CreateAcls
    31: cluster(Op.ALTER),  # DeleteAcls
    32: _configs(Op.DESCRIBE_CONFIGS, "results"),  # DescribeConfigs
    33: _configs(Op.ALTER_CONFIGS, "responses"),  # AlterConfigs
    34: cluster(Op.ALTER),  # AlterReplicaLogDirs
    35: cluster(Op.DESCRIBE),  # DescribeLogDirs
    37: split_topics("topics", "results", Op.ALTER),  # CreatePartitions
    42: strings("groups_names", "results", Res.GROUP, Op.DELETE, GROUP_DENIED, "group_id"),  # DeleteGroups
    43: cluster(Op.ALTER),  # ElectLeaders
    44: _configs(Op.ALTER_CONFIGS, "responses"),  # IncrementalAlterConfigs
    45: cluster(Op.ALTER),  # AlterPartitionReassignments
    46: cluster(Op.DESCRIBE),  # ListPartitionReassignments
    47: chain(group_check(Op.DELETE), split_topics("topics", "topics", Op.READ)),  # OffsetDelete
    48: cluster(Op.DESCRIBE_CONFIGS),  # DescribeClientQuotas
    49: cluster(Op.ALTER_CONFIGS),  # AlterClientQuotas
    50: cluster(Op.DESCRIBE),  # DescribeUserScramCredentials
    51: cluster(Op.ALTER),  # AlterUserScramCredentials
    55: cluster(Op.DESCRIBE),  # DescribeQuorum
    57: cluster(Op.ALTER),  # UpdateFeatures
    61: split_topics("topics", "topics", Op.READ),  # DescribeProducers
    65: describe_transactions,
    66: list_transactions,
    68: consumer_group_heartbeat,
    60: describe_cluster,
    69: with_group_operations(  # ConsumerGroupDescribe
        strings("group_ids", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    74: cluster(Op.DESCRIBE_CONFIGS),  # ListConfigResources
    75: with_topic_partitions_operations(_describe_topic_partitions),
    # Share groups (KIP-932): the group's READ or DESCRIBE; ShareFetch/ShareAcknowledge READ each topic.
    76: group_check(Op.READ),  # ShareGroupHeartbeat
    77: with_group_operations(  # ShareGroupDescribe
        strings("group_ids", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    78: chain(group_check(Op.READ), share_topics),  # ShareFetch
    79: chain(group_check(Op.READ), share_topics),  # ShareAcknowledge
    90: describe_share_group_offsets,
    91: group_check(Op.READ),  # AlterShareGroupOffsets
    92: group_check(Op.DELETE),  # DeleteShareGroupOffsets
    **STREAMS_CHECKS,  # StreamsGroupHeartbeat, StreamsGroupDescribe, StreamsGroupTopologyDescriptionUpdate
}

__all__ = ["CHECKS", "DENIED_MESSAGE", "guarded"]
