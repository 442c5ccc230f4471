"""DeleteShareGroupOffsets (92, KIP-932): an empty share group forgets its share state of whole
topics (NON_EMPTY_GROUP while it has members), through the share-state persister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.offsets import TopicResult
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.protocol.errors import ErrorCode

API_KEY = 92
VERSIONS = (0, 0)


class RequestTopic(Protocol):
    topic_name: str


class DeleteShareGroupOffsetsRequestBody(Protocol):
    group_id: str
    topics: Sequence[RequestTopic]


def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequestBody) -> Any:
    names = [t.topic_name for t in request.topics]
    answer: tuple[ErrorCode, str | None, tuple[TopicResult, ...]]
    if share_groups_off(ctx):
        answer = (ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.", ())
    else:
        answer = ctx.groups.delete_share_group_offsets(request.group_id, names)
    error, message, results = answer
    return ctx.response(
        throttle_time_ms=0,
        error_code=error,
        error_message=message,
        responses=[
            dict(topic_name=r.name, topic_id=r.topic_id, error_code=r.error, error_message=r.error_message)
            for r in results
        ],
    )
