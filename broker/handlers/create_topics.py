"""CreateTopics (19): create topics with partition counts and config overrides, or only validate.

v1 validate_only + error messages; v4 -1 partitions / replication factor take broker defaults;
v5 flexible + the created topic's configs in the response; v7 topic ids.

A request that would create more partitions than Kafka's controller allows in one is refused whole
(batch_limits.py). Topics are created one after the other, their partitions' files off the event
loop (topic_creation.py), so other clients are answered meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.batch_limits import (
    MAX_PARTITIONS_PER_BATCH,
    MAX_RECORDS_PER_USER_OP,
    TOO_MANY_PARTITIONS,
    TOO_MANY_RECORDS,
    requested_partitions,
)
from kafkito.broker.handlers.config_resources import created_topic_configs, warn_deprecated
from kafkito.broker.handlers.replicas import assignment_error, place
from kafkito.broker.log.errors import LogError
from kafkito.broker.log.metadata_log import TopicInfo
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
        configs=[],
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


def _refusal(ctx: RequestContext, request: CreateTopicsRequest, duplicates: set[str]) -> str | None:
    """Kafka's message when the request would create more than one request may (batch_limits.py)."""
    default = ctx.configs.config.num_partitions
    wanted = [t for t in request.topics if t.name not in duplicates]
    if requested_partitions(wanted, default) > MAX_PARTITIONS_PER_BATCH:
        return TOO_MANY_PARTITIONS
    records = 0
    for t in wanted:
        partitions = len(t.assignments) if t.assignments else t.num_partitions
        partitions = default if partitions == -1 else partitions
        if partitions > 0 and ctx.topics.get(t.name) is None:
            records += 1 + sum(c.value is not None for c in t.configs) + partitions
    return TOO_MANY_RECORDS if records > MAX_RECORDS_PER_USER_OP else None


def handle(ctx: RequestContext, request: CreateTopicsRequest) -> Any:
    seen: dict[str, int] = {}
    for t in request.topics:
        seen[t.name] = seen.get(t.name, 0) + 1
    duplicates = {name for name, n in seen.items() if n > 1}
    refusal = _refusal(ctx, request, duplicates)
    if refusal is not None:  # the whole request, as Kafka's controller refuses it: nothing is created
        topics = [_result(t.name, ErrorCode.POLICY_VIOLATION, refusal) for t in request.topics]
        return ctx.response(throttle_time_ms=0, topics=topics)
    if request.validate_only:
        return ctx.response(
            throttle_time_ms=0, topics=[_validate(ctx, t, duplicates) for t in request.topics]
        )
    return _create_all(ctx, request, duplicates)


def _validate(ctx: RequestContext, t: CreatableTopic, duplicates: set[str]) -> dict[str, Any]:
    if t.name in duplicates:
        return _result(t.name, ErrorCode.INVALID_REQUEST, "duplicate topic in the request")
    try:
        partitions, replication = _shape(ctx, t)
        info = ctx.topics.create(t.name, partitions, replication, _configs(t), validate_only=True)
    except (LogError, _Refused) as exc:
        return _result(t.name, exc.code, exc.message or None)
    warn_deprecated(t.name, (c.name for c in t.configs if c.value is not None))
    return _created(info, created_topic_configs(ctx, t.name, dict(info.configs)))


async def _create_all(ctx: RequestContext, request: CreateTopicsRequest, duplicates: set[str]) -> Any:
    """Create the topics one after the other, each off the event loop (topic_creation.py)."""
    results: list[dict[str, Any]] = []
    for t in request.topics:
        if t.name in duplicates:
            results.append(_result(t.name, ErrorCode.INVALID_REQUEST, "duplicate topic in the request"))
            continue
        try:
            partitions, replication = _shape(ctx, t)
            info = await ctx.topics.create_in_background(t.name, partitions, replication, _configs(t))
            warn_deprecated(t.name, (c.name for c in t.configs if c.value is not None))
            if t.assignments:
                ordered = sorted(t.assignments, key=lambda a: a.partition_index)
                place(ctx, t.name, 0, [a.broker_ids for a in ordered])
            configs = created_topic_configs(ctx, t.name)
        except (LogError, _Refused) as exc:
            results.append(_result(t.name, exc.code, exc.message or None))
            continue
        results.append(_created(info, configs))
    return ctx.response(throttle_time_ms=0, topics=results)


def _shape(ctx: RequestContext, t: CreatableTopic) -> tuple[int, int]:
    if t.assignments:
        return _manual_shape(ctx, t)
    return t.num_partitions, t.replication_factor


def _configs(t: CreatableTopic) -> dict[str, str | None]:
    return {c.name: c.value for c in t.configs}


def _created(info: TopicInfo, configs: list[dict[str, Any]]) -> dict[str, Any]:
    """A created (or validated) topic's result, with its configs as Kafka reports them (v5+)."""
    return _result(
        info.name,
        ErrorCode.NONE,
        topic_id=info.topic_id,
        num_partitions=info.partitions,
        replication_factor=1,
        configs=configs,
    )
