"""DescribeTopicPartitions (75, KIP-966): topics and their partitions, a page at a time.

As Kafka's broker: no topics asked means every topic; topics are answered in name order from the
cursor's topic (at the cursor's partition) on; a page holds at most min(`max.request.partition.size.limit`,
ResponsePartitionLimit) partitions and, when more remain, ends with a NextCursor naming the first
partition left out. A named topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (or
INVALID_TOPIC_EXCEPTION for an illegal name); asking for all topics lists only those that exist. A
cursor whose topic is not in the list asked for is INVALID_REQUEST for every topic.

v0 only (flexible).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.metadata import INTERNAL_TOPICS
from kafkito.broker.handlers.replicas import live_nodes, partition_isr, partition_leader, partition_replicas
from kafkito.broker.log.errors import LogError
from kafkito.broker.log.manager import TopicInfo, validate_topic_name
from kafkito.broker.security.supported_operations import TOPIC_OPERATIONS_BITS
from kafkito.protocol.errors import ErrorCode

API_KEY = 75
VERSIONS = (0, 0)

_ZERO_ID = uuid.UUID(int=0)


class TopicRequest(Protocol):
    name: str


class Cursor(Protocol):
    topic_name: str
    partition_index: int


class DescribeTopicPartitionsRequest(Protocol):
    """The fields of kafka-python's DescribeTopicPartitionsRequest this handler reads."""

    topics: Sequence[TopicRequest]
    response_partition_limit: int
    cursor: Cursor | None


def _partition(ctx: RequestContext, topic: str, p: int) -> dict[str, Any]:
    replicas = partition_replicas(ctx, topic, p)
    live = live_nodes(ctx)
    return dict(
        error_code=ErrorCode.NONE,
        partition_index=p,
        leader_id=partition_leader(ctx, topic, p),
        leader_epoch=0,
        replica_nodes=replicas,
        isr_nodes=partition_isr(ctx, topic, p),
        # kafkito keeps no ELR (KIP-966): empty lists, as Kafka answers a partition that has none.
        eligible_leader_replicas=[],
        last_known_elr=[],
        offline_replicas=[r for r in replicas if r not in live],
    )


def _topic(
    name: str, code: ErrorCode, topic_id: uuid.UUID, partitions: list[dict[str, Any]]
) -> dict[str, Any]:
    return dict(
        error_code=code,
        name=name,
        topic_id=topic_id,
        is_internal=name in INTERNAL_TOPICS,
        partitions=partitions,
        # No authorizer: every topic operation (Kafka fills them for each topic it may describe, known
        # or not); with one, authorized_operations.with_topic_partitions_operations puts the principal's.
        topic_authorized_operations=TOPIC_OPERATIONS_BITS,
    )


def _missing(name: str) -> dict[str, Any]:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except LogError:
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return _topic(name, code, _ZERO_ID, [])


def _page(
    ctx: RequestContext, names: list[str], start: dict[str, int], limit: int, all_topics: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The topics of one page and the next cursor (None when nothing is left)."""
    remaining = limit
    out: list[dict[str, Any]] = []
    for name in names:
        if remaining == 0:
            return out, dict(topic_name=name, partition_index=0)
        if remaining < 0:
            break
        info: TopicInfo | None = ctx.topics.get(name)
        if info is None:
            if not all_topics:
                out.append(_missing(name))
            continue
        first = start.get(name, 0)
        end = min(info.partitions, first + remaining)
        partitions = [_partition(ctx, name, p) for p in range(first, end)]
        out.append(_topic(name, ErrorCode.NONE, info.topic_id, partitions))
        if end < info.partitions:
            return out, dict(topic_name=name, partition_index=end)
        remaining -= len(partitions)
    return out, None


def handle(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> Any:
    cursor = request.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    all_topics = not request.topics
    candidates = [t.name for t in ctx.topics.all()] if all_topics else [t.name for t in request.topics]
    names = sorted({n for n in candidates if n >= cursor_topic})
    if not all_topics and cursor is not None and cursor.topic_name not in names:
        return ctx.response(
            throttle_time_ms=0,
            topics=[_topic(t.name, ErrorCode.INVALID_REQUEST, _ZERO_ID, []) for t in request.topics],
            next_cursor=None,
        )
    start = {cursor.topic_name: cursor.partition_index} if cursor is not None else {}
    limit = min(ctx.configs.config.max_request_partition_size_limit, request.response_partition_limit)
    topics, next_cursor = _page(ctx, names, start, limit, all_topics)
    return ctx.response(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)
