"""Which operations on which resources each API needs, as Kafka's request handlers authorize them.

`guarded(handler)` wraps an API's handler when the broker has an authorizer; `CHECKS` holds each API's
check (built from `request_checks`' blocks). APIs absent from the table need no ACL (ApiVersions,
SASL, DescribeCluster). Fetch and OffsetCommit encode their own responses: their handlers refuse the
topics themselves (`authorizer.denied`); here only a replica's Fetch is checked (CLUSTER_ACTION).
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
    keep_only,
    refuse,
    split,
    split_topics,
    strings,
    then,
    topic_check,
    whole,
)
from kafkito.protocol.codec import build_response
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


def _group(op: Op, attr: str = "group_id") -> Check:
    return whole(Res.GROUP, op, attr, GROUP_DENIED)


def _txn(attr: str = "transactional_id") -> Check:
    return whole(Res.TRANSACTIONAL_ID, Op.WRITE, attr, TXN_DENIED)


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
        name = _topic_name(ctx, entry)
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


def _topic_name(ctx: RequestContext, entry: Any) -> str | None:
    """A request entry's topic name, or the name of its topic id (None: not known here)."""
    name = entry if isinstance(entry, str) else getattr(entry, "name", None)
    if name is None and getattr(entry, "topic_id", None) is not None:
        info = ctx.topics.get_by_id(entry.topic_id)
        name = info.name if info is not None else None
    return name


def _by_topic(op: Op, field: str = "topics", out: str = "topics") -> Check:
    """Like `split_topics`, for entries that may name their topic by id."""

    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        authorizer = auth(ctx)

        def decide(entry: Any) -> ErrorCode | None:
            name = _topic_name(ctx, entry)
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


# -- groups ----------------------------------------------------------------------------------------


def _offset_fetch(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the group (each group from v8); the topics asked for that the principal may not
    DESCRIBE are TOPIC_AUTHORIZATION_FAILED, and a listing of all topics leaves them out."""
    authorizer = auth(ctx)
    if ctx.version >= 8:
        asked_all = {g.group_id: g.topics is None for g in request.groups}

        def decide(group: Any) -> ErrorCode | None:
            ok = authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, group.group_id)
            return None if ok else GROUP_DENIED

        def fix(response: Any) -> None:
            for group in response.groups:
                if group.error_code == ErrorCode.NONE:
                    _offset_topics(ctx, group, asked_all.get(group.group_id, False))
                elif group.error_code == GROUP_DENIED:
                    group.topics = []  # a refused group is answered without its topics, as Kafka

        return then(split(ctx, request, handler, "groups", "groups", decide), fix)
    if not authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, request.group_id):
        return refuse(ctx, request, GROUP_DENIED)
    asked = request.topics is None
    return then(handler.handle(ctx, request), lambda response: _offset_topics(ctx, response, asked))


def _offset_topics(ctx: RequestContext, holder: Any, asked_all: bool) -> None:
    authorizer = auth(ctx)
    kept = []
    for topic in holder.topics:
        if authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, topic.name):
            kept.append(topic)
        elif not asked_all:
            for p in topic.partitions:
                p.error_code, p.committed_offset, p.metadata = TOPIC_DENIED, -1, None
            kept.append(topic)
    holder.topics = kept


def _find_coordinator(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    key_type = request.key_type if ctx.version >= 1 else 0
    if key_type == 0:
        resource, error = Res.GROUP, GROUP_DENIED
    elif key_type == 1:
        resource, error = Res.TRANSACTIONAL_ID, TXN_DENIED
    else:
        return handler.handle(ctx, request)
    authorizer = auth(ctx)
    if ctx.version < 4:
        if authorizer.authorize(ctx, Op.DESCRIBE, resource, request.key):
            return handler.handle(ctx, request)
        return refuse(ctx, request, error)
    keys = list(request.coordinator_keys)
    refused = [k for k in keys if not authorizer.authorize(ctx, Op.DESCRIBE, resource, k)]
    if not refused:
        return handler.handle(ctx, request)
    request.coordinator_keys = [k for k in keys if k not in refused]
    entries = [
        {"key": k, "node_id": -1, "host": "", "port": -1, "error_code": error, "error_message": error.name}
        for k in refused
    ]
    extra = build_response(ctx.header.api_key, ctx.version, coordinators=entries).coordinators
    if not request.coordinator_keys:
        return build_response(ctx.header.api_key, ctx.version, coordinators=entries, throttle_time_ms=0)
    return then(handler.handle(ctx, request), lambda response: response.coordinators.extend(extra))


def _list_groups(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    if authorizer.authorize_cluster(ctx, Op.DESCRIBE):
        return handler.handle(ctx, request)
    return then(
        handler.handle(ctx, request),
        lambda response: keep_only(
            response, "groups", lambda g: authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, g.group_id)
        ),
    )


def _consumer_group_heartbeat(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    if not authorizer.authorize(ctx, Op.READ, Res.GROUP, request.group_id):
        return refuse(ctx, request, GROUP_DENIED)
    names = request.subscribed_topic_names or ()
    denied = sorted(n for n in set(names) if not authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, n))
    if denied:
        return refuse(ctx, request, TOPIC_DENIED, f"The following topics are not authorized: {denied}")
    return handler.handle(ctx, request)


# -- transactions ----------------------------------------------------------------------------------


def _init_producer_id(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic."""
    authorizer = auth(ctx)
    if request.transactional_id is not None:
        if not authorizer.authorize(ctx, Op.WRITE, Res.TRANSACTIONAL_ID, request.transactional_id):
            return refuse(ctx, request, TXN_DENIED)
    elif not (
        authorizer.authorize_cluster(ctx, Op.IDEMPOTENT_WRITE)
        or authorizer.authorize_any(ctx, Op.WRITE, Res.TOPIC)
    ):
        return refuse(ctx, request, CLUSTER_DENIED)
    return handler.handle(ctx, request)


def _produce(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    txn = request.transactional_id if ctx.version >= 3 else None
    if txn is not None and not authorizer.authorize(ctx, Op.WRITE, Res.TRANSACTIONAL_ID, txn):
        return refuse(ctx, request, TXN_DENIED)
    return split(ctx, request, handler, "topic_data", "responses", topic_check(Op.WRITE)(ctx))


def _add_partitions_to_txn(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """v4+ (brokers verifying) needs CLUSTER_ACTION. Up to v3: WRITE on the transactional id, and when a
    topic may not be written nothing is added (the others are OPERATION_NOT_ATTEMPTED)."""
    authorizer = auth(ctx)
    if ctx.version >= 4:
        if authorizer.authorize_cluster(ctx, Op.CLUSTER_ACTION):
            return handler.handle(ctx, request)
        return refuse(ctx, request, CLUSTER_DENIED)
    txn = request.v3_and_below_transactional_id
    if not authorizer.authorize(ctx, Op.WRITE, Res.TRANSACTIONAL_ID, txn):
        return refuse(ctx, request, TXN_DENIED)
    not_tried, denied_code = ErrorCode.OPERATION_NOT_ATTEMPTED, TOPIC_DENIED
    names = {t.name for t in request.v3_and_below_topics}
    denied = names - authorizer.allowed(ctx, Op.WRITE, Res.TOPIC, names)
    if not denied:
        return handler.handle(ctx, request)
    results = [
        {
            "name": t.name,
            "results_by_partition": [
                {"partition_index": p, "partition_error_code": denied_code if t.name in denied else not_tried}
                for p in t.partitions
            ],
        }
        for t in request.v3_and_below_topics
    ]
    return ctx.response(throttle_time_ms=0, results_by_topic_v3_and_below=results)


def _txn_offset_commit(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    return chain(_txn(), _group(Op.READ), split_topics("topics", "topics", Op.READ))(ctx, request, handler)


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


def _list_transactions(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    return then(
        handler.handle(ctx, request),
        lambda response: keep_only(
            response,
            "transaction_states",
            lambda t: authorizer.authorize(ctx, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t.transactional_id),
        ),
    )


def _share_topics(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """ShareFetch/ShareAcknowledge: the partitions of a topic the principal may not READ are answered
    TOPIC_AUTHORIZATION_FAILED (their records neither acquired nor acknowledged)."""
    authorizer = auth(ctx)
    entries = list(request.topics or ())
    denied = [t for t in entries if not _may(ctx, authorizer.authorize, Op.READ, t)]
    if not denied:
        return handler.handle(ctx, request)
    request.topics = [t for t in entries if t not in denied]
    no_leader = {"leader_id": -1, "leader_epoch": -1}
    answers = [
        {
            "topic_id": t.topic_id,
            "partitions": [
                {
                    "partition_index": p.partition_index,
                    "error_code": TOPIC_DENIED,
                    "current_leader": no_leader,
                }
                for p in t.partitions
            ],
        }
        for t in denied
    ]
    extra = build_response(ctx.header.api_key, ctx.version, responses=answers).responses
    return then(handler.handle(ctx, request), lambda response: response.responses.extend(extra))


def _may(ctx: RequestContext, authorize: Any, op: Op, entry: Any) -> bool:
    name = _topic_name(ctx, entry)
    return name is None or bool(authorize(ctx, op, Res.TOPIC, name))


def _describe_share_group_offsets(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)

    def decide(group: Any) -> ErrorCode | None:
        ok = authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, group.group_id)
        return None if ok else GROUP_DENIED

    return split(ctx, request, handler, "groups", "groups", decide)


_describe_transactions = strings(
    "transactional_ids",
    "transaction_states",
    Res.TRANSACTIONAL_ID,
    Op.DESCRIBE,
    TXN_DENIED,
    "transactional_id",
)

CHECKS: dict[int, Check] = {
    0: _produce,
    1: _fetch,
    2: split_topics("topics", "topics", Op.DESCRIBE),  # ListOffsets
    3: with_metadata_operations(_metadata),
    8: _group(Op.READ),  # OffsetCommit (its handler refuses the topics it may not READ)
    9: _offset_fetch,
    10: _find_coordinator,
    11: _group(Op.READ),  # JoinGroup
    12: _group(Op.READ),  # Heartbeat
    13: _group(Op.READ),  # LeaveGroup
    14: _group(Op.READ),  # SyncGroup
    15: with_group_operations(  # DescribeGroups
        strings("groups", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    16: _list_groups,
    19: _create_topics,
    20: _delete_topics,
    21: split_topics("topics", "topics", Op.DELETE),  # DeleteRecords
    22: _init_producer_id,
    23: _offset_for_leader_epoch,
    24: _add_partitions_to_txn,
    25: chain(_txn(), _group(Op.READ)),  # AddOffsetsToTxn
    26: _txn(),  # EndTxn
    28: _txn_offset_commit,
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
    47: chain(_group(Op.DELETE), split_topics("topics", "topics", Op.READ)),  # OffsetDelete
    48: cluster(Op.DESCRIBE_CONFIGS),  # DescribeClientQuotas
    49: cluster(Op.ALTER_CONFIGS),  # AlterClientQuotas
    50: cluster(Op.DESCRIBE),  # DescribeUserScramCredentials
    51: cluster(Op.ALTER),  # AlterUserScramCredentials
    57: cluster(Op.ALTER),  # UpdateFeatures
    61: split_topics("topics", "topics", Op.READ),  # DescribeProducers
    65: _describe_transactions,
    66: _list_transactions,
    68: _consumer_group_heartbeat,
    60: describe_cluster,
    69: with_group_operations(  # ConsumerGroupDescribe
        strings("group_ids", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    75: _describe_topic_partitions,
    # Share groups (KIP-932): the group's READ or DESCRIBE; ShareFetch/ShareAcknowledge READ each topic.
    76: _group(Op.READ),  # ShareGroupHeartbeat
    77: with_group_operations(  # ShareGroupDescribe
        strings("group_ids", "groups", Res.GROUP, Op.DESCRIBE, GROUP_DENIED, "group_id")
    ),
    78: chain(_group(Op.READ), _share_topics),  # ShareFetch
    79: chain(_group(Op.READ), _share_topics),  # ShareAcknowledge
    90: _describe_share_group_offsets,
    91: _group(Op.READ),  # AlterShareGroupOffsets
    92: _group(Op.DELETE),  # DeleteShareGroupOffsets
}

__all__ = ["CHECKS", "DENIED_MESSAGE", "guarded"]
