"""CreateTopics (19): create topics with partition counts and config overrides, or only validate.

v1 validate_only + error messages; v4 -1 partitions / replication factor take broker defaults;
v5 flexible + the created topic's configs in the response; v7 topic ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 19
VERSIONS = (2, 7)


class CreatableTopicConfig(Protocol):
    name: str
    value: str | None


class CreatableTopic(Protocol):
    name: str
    num_partitions: int
    replication_factor: int
    assignments: Sequence[object]
    configs: Sequence[CreatableTopicConfig]


class CreateTopicsRequest(Protocol):
    """The fields of kafka-python's CreateTopicsRequest this handler reads."""

    topics: Sequence[CreatableTopic]
    validate_only: bool


def _result(name: str, error: ErrorCode, message: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        name=name,
        topic_id=None,
        error_code=error,
        error_message=message,
        num_partitions=-1,
        replication_factor=-1,
        configs=None,
    )
    out.update(extra)
    return out


def handle(ctx: RequestContext, request: CreateTopicsRequest) -> Any:
    topics = ctx.topics
    seen: dict[str, int] = {}
    for t in request.topics:
        seen[t.name] = seen.get(t.name, 0) + 1
    results: list[dict[str, Any]] = []
    for t in request.topics:
        if seen[t.name] > 1:
            results.append(_result(t.name, ErrorCode.INVALID_REQUEST, "duplicate topic in the request"))
            continue
        if t.assignments:
            results.append(
                _result(t.name, ErrorCode.INVALID_REQUEST, "manual replica assignment is not supported")
            )
            continue
        try:
            info = topics.create(
                t.name,
                t.num_partitions,
                t.replication_factor,
                {c.name: c.value for c in t.configs},
                validate_only=bool(request.validate_only),
            )
            entries = topics.describe_config(t.name) if not request.validate_only else []
        except LogError as exc:
            results.append(_result(t.name, exc.code, exc.message or None))
            continue
        results.append(
            _result(
                t.name,
                ErrorCode.NONE,
                topic_id=info.topic_id,
                num_partitions=info.partitions,
                replication_factor=1,
                configs=[
                    dict(
                        name=e.name,
                        value=e.value,
                        read_only=False,
                        config_source=int(e.source),
                        is_sensitive=False,
                    )
                    for e in entries
                ],
            )
        )
    return ctx.response(throttle_time_ms=0, topics=results)
