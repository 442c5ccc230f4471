"""AlterShareGroupOffsets (91, KIP-932): reset share-partition start offsets of an empty share group
(NON_EMPTY_GROUP while it has members), through the share-state persister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.offsets import TopicResult
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.protocol.errors import ErrorCode

API_KEY = 91
VERSIONS = (0, 0)


class RequestPartition(Protocol):
    partition_index: int
    start_offset: int


class RequestTopic(Protocol):
    topic_name: str
    partitions: Sequence[RequestPartition]


class AlterShareGroupOffsetsRequestBody(Protocol):
    group_id: str
    topics: Sequence[RequestTopic]


def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequestBody) -> Any:
    topics = [
        (t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions]) for t in request.topics
    ]
    answer: tuple[ErrorCode, str | None, tuple[TopicResult, ...]]
    if share_groups_off(ctx):
        answer = (ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.", ())
    else:
        answer = ctx.groups.alter_share_group_offsets(request.group_id, topics)
    error, message, results = answer
    return ctx.response(
        throttle_time_ms=0,
        error_code=error,
        error_message=message,
        responses=[
            dict(
                topic_name=r.name,
                topic_id=r.topic_id,
                partitions=[
                    dict(partition_index=p, error_code=code, error_message=text)
                    for p, code, text in r.partitions
                ],
            )
            for r in results
        ],
    )
