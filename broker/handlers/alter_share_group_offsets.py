"""AlterShareGroupOffsets (91, KIP-932): reset share-partition start offsets of an empty share group
(NON_EMPTY_GROUP while it has members; an id no group has becomes an empty share group, as in Kafka),
through the share-state persister. Answered once the group's state record is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.offsets import AlterAnswer
from kafkito.broker.handlers.parked import Parked
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
    def build(answer: AlterAnswer) -> Any:
        return _response(ctx, answer)

    if share_groups_off(ctx):
        return build((ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.", ()))
    topics = [
        (t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions]) for t in request.topics
    ]
    parked: Parked[AlterAnswer] = Parked(build)
    ctx.groups.alter_share_group_offsets(request.group_id, topics, parked.callback)
    return parked.response()


def _response(ctx: RequestContext, answer: AlterAnswer) -> Any:
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
