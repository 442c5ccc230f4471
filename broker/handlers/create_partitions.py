"""CreatePartitions (37): grow a topic's partition count (never shrink), or only validate; an explicit
assignment of the new partitions is checked as Kafka's controller checks it.

v1 no change; v2 flexible; v3 no change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.replicas import assignment_error, partition_replicas, place
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 37
VERSIONS = (0, 3)


class CreatePartitionsAssignment(Protocol):
    broker_ids: Sequence[int]


class CreatePartitionsTopic(Protocol):
    name: str
    count: int
    assignments: Sequence[CreatePartitionsAssignment] | None


class CreatePartitionsRequest(Protocol):
    """The fields of kafka-python's CreatePartitionsRequest this handler reads."""

    topics: Sequence[CreatePartitionsTopic]
    validate_only: bool


class _BadAssignment(Exception):
    """INVALID_REPLICA_ASSIGNMENT, with Kafka's message."""


def _check_assignments(ctx: RequestContext, t: CreatePartitionsTopic, current: int) -> None:
    assignments = t.assignments
    if assignments is None:
        return
    added = t.count - current
    if len(assignments) != added:
        raise _BadAssignment(
            f"Attempted to add {added} additional partition(s), but only {len(assignments)} "
            "assignment(s) were specified."
        )
    rf = len(partition_replicas(ctx, t.name, 0))
    for i, a in enumerate(assignments):
        message = assignment_error(a.broker_ids, ctx, rf, current + i)
        if message is not None:
            raise _BadAssignment(message)


def _grow(ctx: RequestContext, t: CreatePartitionsTopic, validate_only: bool) -> None:
    topics = ctx.topics
    info = topics.get(t.name)
    # the counts are checked first (unknown topic, shrink, no change), then the assignment
    topics.add_partitions(t.name, t.count, validate_only=True)
    if info is not None:
        _check_assignments(ctx, t, info.partitions)
    if not validate_only:
        topics.add_partitions(t.name, t.count)
        if info is not None and t.assignments is not None:
            place(ctx, t.name, info.partitions, [a.broker_ids for a in t.assignments])


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> Any:
    results = []
    validate_only = bool(request.validate_only)
    for t in request.topics:
        try:
            _grow(ctx, t, validate_only)
        except LogError as exc:
            results.append(dict(name=t.name, error_code=exc.code, error_message=exc.message or None))
            continue
        except _BadAssignment as exc:
            results.append(
                dict(name=t.name, error_code=ErrorCode.INVALID_REPLICA_ASSIGNMENT, error_message=str(exc))
            )
            continue
        results.append(dict(name=t.name, error_code=ErrorCode.NONE, error_message=None))
    return ctx.response(throttle_time_ms=0, results=results)
