"""The authorization checks of the group, transaction and share-group APIs (`api_checks` holds the table).

As Kafka's request handlers make them: the group's READ or DESCRIBE, the transactional id's WRITE,
and the topics these requests name; listings (ListGroups, ListTransactions) filtered.
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import AclOperation as Op
from kafkito.broker.security.acls import ResourceType as Res
from kafkito.broker.security.request_checks import (
    CLUSTER_DENIED,
    GROUP_DENIED,
    TOPIC_DENIED,
    TXN_DENIED,
    Handler,
    auth,
    chain,
    group_check,
    keep_only,
    refuse,
    split,
    split_topics,
    strings,
    then,
    topic_name,
    txn_check,
)
from kafkito.protocol.codec import build_response
from kafkito.protocol.errors import ErrorCode

# -- groups ----------------------------------------------------------------------------------------


def offset_fetch(ctx: RequestContext, request: Any, handler: Handler) -> Any:
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
        name = topic_name(ctx, topic)  # v10 answers by id; None: an id no topic has (UNKNOWN_TOPIC_ID)
        if name is None or authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, name):
            kept.append(topic)
        elif not asked_all:
            for p in topic.partitions:
                p.error_code, p.committed_offset, p.metadata = TOPIC_DENIED, -1, None
            kept.append(topic)
    holder.topics = kept


def find_coordinator(ctx: RequestContext, request: Any, handler: Handler) -> Any:
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


def list_groups(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    if authorizer.authorize_cluster(ctx, Op.DESCRIBE):
        return handler.handle(ctx, request)
    return then(
        handler.handle(ctx, request),
        lambda response: keep_only(
            response, "groups", lambda g: authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, g.group_id)
        ),
    )


def consumer_group_heartbeat(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    if not authorizer.authorize(ctx, Op.READ, Res.GROUP, request.group_id):
        return refuse(ctx, request, GROUP_DENIED)
    names = request.subscribed_topic_names or ()
    denied = sorted(n for n in set(names) if not authorizer.authorize(ctx, Op.DESCRIBE, Res.TOPIC, n))
    if denied:  # Kafka's own answer here, naming the topics (its getErrorResponse carries no message)
        message = f"The following topics are not authorized: {denied}"
        return ctx.response(error_code=TOPIC_DENIED, error_message=message)
    return handler.handle(ctx, request)


def init_producer_id(ctx: RequestContext, request: Any, handler: Handler) -> Any:
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


def add_partitions_to_txn(ctx: RequestContext, request: Any, handler: Handler) -> Any:
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


def txn_offset_commit(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    check = chain(txn_check(), group_check(Op.READ), split_topics("topics", "topics", Op.READ))
    return check(ctx, request, handler)


def list_transactions(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)
    return then(
        handler.handle(ctx, request),
        lambda response: keep_only(
            response,
            "transaction_states",
            lambda t: authorizer.authorize(ctx, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t.transactional_id),
        ),
    )


def share_topics(ctx: RequestContext, request: Any, handler: Handler) -> Any:
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
    name = topic_name(ctx, entry)
    return name is None or bool(authorize(ctx, op, Res.TOPIC, name))


def describe_share_group_offsets(ctx: RequestContext, request: Any, handler: Handler) -> Any:
    authorizer = auth(ctx)

    def decide(group: Any) -> ErrorCode | None:
        ok = authorizer.authorize(ctx, Op.DESCRIBE, Res.GROUP, group.group_id)
        return None if ok else GROUP_DENIED

    return split(ctx, request, handler, "groups", "groups", decide)


describe_transactions = strings(
    "transactional_ids",
    "transaction_states",
    Res.TRANSACTIONAL_ID,
    Op.DESCRIBE,
    TXN_DENIED,
    "transactional_id",
)
