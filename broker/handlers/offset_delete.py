"""OffsetDelete (47): remove a group's offsets for partitions nobody in the group consumes (KIP-496).

v0 only. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION; a group-level error replaces the topics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import TopicPartition
from kafkito.protocol.errors import ErrorCode

API_KEY = 47
VERSIONS = (0, 0)


class OffsetDeletePartition(Protocol):
    partition_index: int


class OffsetDeleteTopic(Protocol):
    name: str
    partitions: Sequence[OffsetDeletePartition]


class OffsetDeleteRequestBody(Protocol):
    """The fields of kafka-python's OffsetDeleteRequest this handler reads."""

    group_id: str | None
    topics: Sequence[OffsetDeleteTopic]


def handle(ctx: RequestContext, request: OffsetDeleteRequestBody) -> Any:
    topics = ctx.topics
    order: list[tuple[str, list[int]]] = []
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[TopicPartition] = []
    for topic in request.topics:
        info = topics.get(topic.name)
        indexes = []
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            indexes.append(p.partition_index)
            if info is None or not 0 <= p.partition_index < info.partitions:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                known.append(tp)
        order.append((topic.name, indexes))
    group_error, results = ctx.groups.delete_offsets(request.group_id, known)
    if group_error is not ErrorCode.NONE:
        return ctx.response(error_code=group_error, throttle_time_ms=0, topics=[])
    errors.update(results)
    return ctx.response(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=[
            dict(
                name=name,
                partitions=[
                    dict(partition_index=i, error_code=errors[TopicPartition(name, i)]) for i in indexes
                ],
            )
            for name, indexes in order
        ],
    )
