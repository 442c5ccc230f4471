"""DeleteTopics (20): delete topics by name (or by id from v6); their logs are removed from disk.

v1 throttle time; v4 flexible; v5 error messages; v6 topics by name or id. A topic that does not exist
is refused with the error's own description as its message, as Kafka's controller words it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 20
VERSIONS = (0, 6)

_INTERNAL = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# Kafka's default descriptions of the two errors (its controller answers them as the message).
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
UNKNOWN_TOPIC_ID_MESSAGE = "This server does not host this topic ID."


class DeleteTopicState(Protocol):
    name: str | None
    topic_id: uuid.UUID


class DeleteTopicsRequest(Protocol):
    """The fields of kafka-python's DeleteTopicsRequest this handler reads."""

    topic_names: Sequence[str]  # up to v5
    topics: Sequence[DeleteTopicState]  # v6+


def _delete(ctx: RequestContext, name: str | None, topic_id: uuid.UUID | None) -> dict[str, Any]:
    topics = ctx.topics
    if name is None:
        info = topics.get_by_id(topic_id) if topic_id is not None else None
        if info is None:
            return dict(
                name=None,
                topic_id=topic_id,
                error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                error_message=UNKNOWN_TOPIC_ID_MESSAGE,
            )
        name = info.name
    if not ctx.configs.config.delete_topic_enable:
        return dict(
            name=name, topic_id=topic_id, error_code=ErrorCode.TOPIC_DELETION_DISABLED, error_message=None
        )
    if name in _INTERNAL:
        return dict(
            name=name,
            topic_id=topic_id,
            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            error_message="internal topics cannot be deleted",
        )
    try:
        info = topics.delete(name)
    except LogError as exc:
        unknown = exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        message = UNKNOWN_TOPIC_MESSAGE if unknown else exc.message or None
        return dict(name=name, topic_id=topic_id, error_code=exc.code, error_message=message)
    return dict(name=name, topic_id=info.topic_id, error_code=ErrorCode.NONE, error_message=None)


def handle(ctx: RequestContext, request: DeleteTopicsRequest) -> Any:
    wanted: list[tuple[str | None, uuid.UUID | None]]
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id if t.name is None else None) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    return ctx.response(throttle_time_ms=0, responses=[_delete(ctx, n, i) for n, i in wanted])
