"""CreateTopics (19): create topics with partition counts and config overrides, or only validate.

v1 validate_only + error messages; v4 -1 partitions / replication factor take broker defaults;
v5 flexible + the created topic's configs in the response; v7 topic ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.config_resources import warn_deprecated
from kafkito.broker.handlers.replicas import assignment_error, place
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 19
VERSIONS = (0, 7)


class CreatableTopicConfig(Protocol):
    name: str
    value: str | None


class CreatableReplicaAssignment(Protocol):
    partition_index: int
    broker_ids: Sequence[int]


class CreatableTopic(Protocol):
    name: str
    num_partitions: int
    replication_factor: int
    assignments: Sequence[CreatableReplicaAssignment]
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


class _Refused(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _manual_shape(ctx: RequestContext, t: CreatableTopic) -> tuple[int, int]:
    """(partitions, replication factor) of a topic created with a manual assignment, checked as Kafka's
    controller checks it; raises _Refused otherwise."""
    if t.replication_factor != -1:
        raise _Refused(
            ErrorCode.INVALID_REQUEST,
            "A manual partition assignment was specified, but replication factor was not set to -1.",
        )
    if t.num_partitions != -1:
        raise _Refused(
            ErrorCode.INVALID_REQUEST,
            "A manual partition assignment was specified, but numPartitions was not set to -1.",
        )
    rf: int | None = None
    indexes: set[int] = set()
    for a in t.assignments:
        if a.partition_index in indexes:
            raise _Refused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Found multiple manual partition assignments for partition {a.partition_index}",
            )
        message = assignment_error(a.broker_ids, ctx, rf, a.partition_index)
        if message is not None:
            raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)
        rf = len(a.broker_ids)
        indexes.add(a.partition_index)
    if indexes != set(range(len(indexes))):
        message = "partitions should be a consecutive 0-based integer sequence"
        raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)
    return len(indexes), rf or -1


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
        partitions, replication = t.num_partitions, t.replication_factor
        try:
            if t.assignments:
                partitions, replication = _manual_shape(ctx, t)
            info = topics.create(
                t.name,
                partitions,
                replication,
                {c.name: c.value for c in t.configs},
                validate_only=bool(request.validate_only),
            )
            warn_deprecated(t.name, (c.name for c in t.configs if c.value is not None))
            if t.assignments and not request.validate_only:
                ordered = sorted(t.assignments, key=lambda a: a.partition_index)
                place(ctx, t.name, 0, [a.broker_ids for a in ordered])
            entries = topics.describe_config(t.name) if not request.validate_only else []
        except (LogError, _Refused) as exc:
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
