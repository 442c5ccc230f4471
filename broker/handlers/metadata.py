"""Metadata (3): brokers, cluster id, controller and topics with their partitions.

v1 adds rack, controller id, is_internal and null = all topics; v2 cluster id; v3 throttle time;
v4 allow_auto_topic_creation; v5 offline replicas; v7 leader epoch; v8 authorized operations;
v9 flexible; v10 topic ids; v11 drops cluster authorized operations; v12 null topic names (by id);
v13 a top-level error code (KIP-1102: REBOOTSTRAP_REQUIRED, which a broker that knows its cluster
never has to send: always NONE here, as from Kafka's broker).

As Kafka 4 (KRaft): all topics (null) lists the internal ones too (`__consumer_offsets`,
`__transaction_state`, `__share_group_state`, once they exist) with is_internal set; a topic
auto-created by this request is answered UNKNOWN_TOPIC_OR_PARTITION with no partitions (Kafka's
broker has only asked its controller to create it), and the next request sees it. Without an
authorizer, the authorized operations asked for are every operation: the cluster's (v8-v10), and each
topic's (v8+) but for a topic id no topic has; with one, authorized_operations.py puts the principal's.
As Kafka: a request that names a topic by id (a non-zero id) is answered for its ids alone (the topics
it names are left out; an id named twice is answered once), and v10-v11, whose ids Kafka's broker does
not take, answer a topic id or a null name with INVALID_REQUEST on every topic asked for.

A one-node broker without ACLs encodes its answer by hand, each topic's partition list once
(metadata_encode.py): a topic of thousands of partitions is answered in microseconds.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.metadata_encode import (
    NOT_REQUESTED,
    Broker,
    PartitionLists,
    TopicEntry,
    empty_partitions,
    encode_metadata,
)
from kafkito.broker.log.errors import LogError, TopicAlreadyExists
from kafkito.broker.log.manager import TopicInfo, validate_topic_name
from kafkito.broker.security.supported_operations import (
    CLUSTER_OPERATIONS,
    CLUSTER_OPERATIONS_BITS,
    TOPIC_OPERATIONS,
    TOPIC_OPERATIONS_BITS,
)
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.cluster import Topology
    from kafkito.broker.services import Cluster, Topics

API_KEY = 3
VERSIONS = (0, 13)
TOPIC_IDS_SINCE = 10  # the request's topics carry an id field
ANSWERS_IDS_SINCE = 12  # ... and the broker answers topics asked for by id

OFFSETS_TOPIC = "__consumer_offsets"
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, "__transaction_state", "__share_group_state"})


class MetadataTopic(Protocol):
    name: str | None  # None (v12+): by id
    topic_id: uuid.UUID  # v10+


class MetadataRequest(Protocol):
    """The fields of kafka-python's MetadataRequest this handler reads."""

    topics: Sequence[MetadataTopic] | None  # None (v1+): every topic
    allow_auto_topic_creation: bool  # v4+
    include_cluster_authorized_operations: bool  # v8-v10
    include_topic_authorized_operations: bool  # v8+


def _topic_entry(info: TopicInfo, cluster: Cluster) -> dict[str, Any]:
    topology = cluster.topology
    if not topology.single:
        return _cluster_topic_entry(info, topology)
    node_id = cluster.node_id
    nodes = [node_id]
    return dict(
        error_code=ErrorCode.NONE,
        name=info.name,
        topic_id=info.topic_id,
        is_internal=info.name in INTERNAL_TOPICS,
        partitions=[
            dict(
                error_code=ErrorCode.NONE,
                partition_index=p,
                leader_id=node_id,
                leader_epoch=0,
                replica_nodes=nodes,
                isr_nodes=nodes,
                offline_replicas=[],
            )
            for p in range(info.partitions)
        ],
    )


def _cluster_topic_entry(info: TopicInfo, topology: Topology) -> dict[str, Any]:
    """A topic of a multi-node cluster: each partition's leader (-1 and LEADER_NOT_AVAILABLE when no
    replica is live), replicas, ISR and the replicas on stopped nodes."""
    live = topology.live
    partitions = []
    for p, state in enumerate(topology.partitions(info.name)):
        leader = state.leader
        partitions.append(
            dict(
                error_code=ErrorCode.NONE if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=p,
                leader_id=leader,
                leader_epoch=0,
                replica_nodes=list(state.replicas),
                isr_nodes=list(state.isr),
                offline_replicas=[r for r in state.replicas if r not in live],
            )
        )
    return dict(
        error_code=ErrorCode.NONE,
        name=info.name,
        topic_id=info.topic_id,
        is_internal=info.name in INTERNAL_TOPICS,
        partitions=partitions,
    )


def _error_entry(name: str | None, code: ErrorCode, topic_id: Any = None) -> dict[str, Any]:
    return dict(error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=[])


class _Failed(NamedTuple):
    """A topic answered with an error and no partitions."""

    name: str | None
    code: ErrorCode
    topic_id: uuid.UUID | None = None


_Answer = TopicInfo | _Failed


def _named(topics: Topics, name: str) -> TopicInfo | None:
    """The topic called `name`; `__consumer_offsets` is created when first asked for, as in Kafka."""
    info = topics.get(name)
    if info is None and name == OFFSETS_TOPIC and topics.ensure_offsets_topic():
        info = topics.get(name)
    return info


def handle(ctx: RequestContext, request: MetadataRequest) -> Any:
    topics = ctx.topics
    wanted = request.topics
    if ctx.version == 0 and not wanted:
        wanted = None  # v0: an empty list means every topic
    answers: list[_Answer]
    if wanted is None:
        answers = list(topics.all())  # internal ones too, as Kafka
    else:
        if ctx.version >= TOPIC_IDS_SINCE:
            by_id = [t for t in wanted if _names_an_id(t)]
            if ctx.version < ANSWERS_IDS_SINCE and (by_id or any(t.name is None for t in wanted)):
                return error_response(API_KEY, ctx.version, request, ErrorCode.INVALID_REQUEST)
            if by_id:  # as Kafka: a request naming a topic by id is answered for its ids only, once each
                wanted = list({t.topic_id: t for t in by_id}.values())
        allow_auto = ctx.configs.config.auto_create_topics_enable and (
            ctx.version < 4 or request.allow_auto_topic_creation
        )
        answers = [_answer(topics, t, allow_auto) for t in wanted]
    cluster = ctx.cluster
    topic_ops, cluster_ops = _all_operations(ctx, request)
    if ctx.authorizer is None and cluster.topology.single:
        # Nothing will change the answer (ACL filters, a multi-node topology): encoded by hand.
        return _encoded(ctx, answers, topic_ops, cluster_ops)
    entries = [
        _topic_entry(a, cluster) if isinstance(a, TopicInfo) else _error_entry(a.name, a.code, a.topic_id)
        for a in answers
    ]
    if topic_ops:
        for entry in entries:
            if entry["name"] is not None:
                entry["authorized_operations"] = set(TOPIC_OPERATIONS)
    return ctx.response(
        throttle_time_ms=0,
        brokers=_brokers(cluster, ctx.listener),
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        topics=entries,
        authorized_operations=set(CLUSTER_OPERATIONS) if cluster_ops else None,
        error_code=ErrorCode.NONE,
    )


def _all_operations(ctx: RequestContext, request: MetadataRequest) -> tuple[bool, bool]:
    """Whether every topic and every cluster operation go in the answer: asked for, and no authorizer
    (with one, `authorized_operations.with_metadata_operations` puts the principal's)."""
    if ctx.version < 8 or ctx.authorizer is not None:
        return False, False
    cluster = ctx.version <= 10 and request.include_cluster_authorized_operations
    return request.include_topic_authorized_operations, cluster


def _names_an_id(t: MetadataTopic) -> bool:
    topic_id: uuid.UUID | None = t.topic_id
    return topic_id is not None and topic_id.int != 0


def _answer(topics: Topics, t: MetadataTopic, allow_auto: bool) -> _Answer:
    name = t.name
    # A topic named by id (v10+) is looked up by id whatever its name: Kafka's Java client sends the
    # schema's default name, "", with the id (MetadataRequestTopic), not null.
    asked_id: uuid.UUID | None = getattr(t, "topic_id", None)  # absent before v10
    if name is None or (asked_id is not None and asked_id.int != 0):
        by_id = topics.get_by_id(t.topic_id)
        return _Failed(None, ErrorCode.UNKNOWN_TOPIC_ID, t.topic_id) if by_id is None else by_id
    info = _named(topics, name)
    if info is not None:
        return info
    try:
        validate_topic_name(name)
    except LogError as exc:
        return _Failed(name, exc.code)
    if not allow_auto or name == OFFSETS_TOPIC:
        return _Failed(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    try:
        topics.auto_create(name)
    except TopicAlreadyExists:  # a CreateTopics of that name is under way (topic_creation.py)
        pass
    except LogError as exc:
        return _Failed(name, exc.code)
    # As Kafka 4: created now, answered as a topic not known yet (its broker has sent the creation to
    # its controller); the next request sees its partitions.
    return _Failed(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


_partition_lists = PartitionLists()


def _encoded(ctx: RequestContext, answers: list[_Answer], topic_ops: bool, cluster_ops: bool) -> bytes:
    cluster, version = ctx.cluster, ctx.version
    node = cluster.node_id
    no_partitions = empty_partitions(version)
    ops = TOPIC_OPERATIONS_BITS if topic_ops else NOT_REQUESTED
    entries = [
        TopicEntry(
            ErrorCode.NONE,
            a.name,
            a.topic_id,
            a.name in INTERNAL_TOPICS,
            _partition_lists.get(a.partitions, node, version),
            ops,
        )
        if isinstance(a, TopicInfo)
        else TopicEntry(
            a.code, a.name, a.topic_id, False, no_partitions, NOT_REQUESTED if a.name is None else ops
        )
        for a in answers
    ]
    brokers = [Broker(**b) for b in _brokers(cluster, ctx.listener)]
    return encode_metadata(
        version,
        brokers,
        cluster.cluster_id,
        cluster.controller_id,
        entries,
        CLUSTER_OPERATIONS_BITS if cluster_ops else NOT_REQUESTED,
    )


def _brokers(cluster: Cluster, listener: str | None) -> list[dict[str, Any]]:
    """The live nodes (one, unless the broker runs a cluster), on the listener the client connected to."""
    out = []
    for node_id in cluster.live_nodes():
        host, port = cluster.endpoint(node_id, listener)
        out.append(dict(node_id=node_id, host=host, port=port, rack=None))
    return out
