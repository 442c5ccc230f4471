"""CreatePartitions (37): grow a topic's partition count (never shrink), or only validate; an explicit
assignment of the new partitions is checked as Kafka's controller checks it.

v1 no change; v2 flexible; v3 no change.

A request adding more partitions than Kafka's controller writes in one is answered as Kafka answers
it (batch_limits.py), without creating them; the new partitions' files are made off the event loop
(topic_creation.py), so other clients are answered meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.batch_limits import MAX_RECORDS_PER_USER_OP, TOO_MANY_RECORDS, RecordBudget
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


def _check(ctx: RequestContext, t: CreatePartitionsTopic, budget: RecordBudget) -> int:
    """The topic's partition count now, once the growth passes Kafka's checks in Kafka's order: the
    counts (unknown topic, shrink, no change), the assignment, then the request's record bound."""
    ctx.topics.add_partitions(t.name, t.count, validate_only=True)
    info = ctx.topics.get(t.name)
    assert info is not None  # add_partitions checked it
    _check_assignments(ctx, t, info.partitions)
    if not budget.take(t.count - info.partitions):
        raise _TooLarge
    return info.partitions


class _TooLarge(Exception):
    """Past the records one request may write: UNKNOWN_SERVER_ERROR without a message, as Kafka."""


def _error(t: CreatePartitionsTopic, exc: Exception) -> dict[str, Any]:
    if isinstance(exc, LogError):
        # Kafka's controller refuses an unknown topic without a message (the client shows its own).
        message = None if exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else exc.message or None
        return dict(name=t.name, error_code=exc.code, error_message=message)
    if isinstance(exc, _BadAssignment):
        return dict(name=t.name, error_code=ErrorCode.INVALID_REPLICA_ASSIGNMENT, error_message=str(exc))
    return dict(name=t.name, error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=None)


def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> Any:
    if len(request.topics) > MAX_RECORDS_PER_USER_OP:  # Kafka's list of results overflows: all refused
        refused = dict(error_code=ErrorCode.POLICY_VIOLATION, error_message=TOO_MANY_RECORDS)
        return ctx.response(
            throttle_time_ms=0, results=[dict(name=t.name, **refused) for t in request.topics]
        )
    if request.validate_only:
        budget = RecordBudget()
        results = []
        for t in request.topics:
            try:
                _check(ctx, t, budget)
            except (LogError, _BadAssignment, _TooLarge) as exc:
                results.append(_error(t, exc))
                continue
            results.append(dict(name=t.name, error_code=ErrorCode.NONE, error_message=None))
        return ctx.response(throttle_time_ms=0, results=results)
    return _grow_all(ctx, request)


async def _grow_all(ctx: RequestContext, request: CreatePartitionsRequest) -> Any:
    """Grow the topics one after the other, each off the event loop (topic_creation.py)."""
    budget = RecordBudget()
    results = []
    for t in request.topics:
        try:
            current = _check(ctx, t, budget)
            await ctx.topics.add_partitions_in_background(t.name, t.count)
            if t.assignments is not None:
                place(ctx, t.name, current, [a.broker_ids for a in t.assignments])
        except (LogError, _BadAssignment, _TooLarge) as exc:
            results.append(_error(t, exc))
            continue
        results.append(dict(name=t.name, error_code=ErrorCode.NONE, error_message=None))
    return ctx.response(throttle_time_ms=0, results=results)
