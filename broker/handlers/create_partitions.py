"""CreatePartitions (37): grow a topic's partition count (never shrink), or only validate.

v1 no change; v2 flexible; v3 no change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 37
VERSIONS = (0, 3)


class CreatePartitionsTopic(Protocol):
    name: str
    count: int
    assignments: Sequence[object] | None


class CreatePartitionsRequest(Protocol):
    """The fields of kafka-python's CreatePartitionsRequest this handler reads."""

    topics: Sequence[CreatePartitionsTopic]
    validate_only: bool


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> Any:
    topics = ctx.topics
    results = []
    for t in request.topics:
        try:
            if t.assignments:
                raise _ManualAssignment()
            topics.add_partitions(t.name, t.count, validate_only=bool(request.validate_only))
        except LogError as exc:
            results.append(dict(name=t.name, error_code=exc.code, error_message=exc.message or None))
            continue
        except _ManualAssignment:
            results.append(
                dict(
                    name=t.name,
                    error_code=ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    error_message="manual replica assignment is not supported",
                )
            )
            continue
        results.append(dict(name=t.name, error_code=ErrorCode.NONE, error_message=None))
    return ctx.response(throttle_time_ms=0, results=results)


class _ManualAssignment(Exception):
    pass
