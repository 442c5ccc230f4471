"""AlterPartitionReassignments (45): move partitions to another replica set, or cancel a move.

Checked as Kafka's controller checks it: an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION;
a target that is empty, repeats a node or names a node that is not registered is
INVALID_REPLICA_ASSIGNMENT with Kafka's message; a cancel (null replicas) of a partition that is not
being moved is NO_REASSIGNMENT_IN_PROGRESS. A valid target names only live nodes that hold the
partition already (one node: the node itself), so the reassignment is complete when it is accepted
and ListPartitionReassignments never shows it as ongoing.

v0 flexible; v1 AllowReplicationFactorChange (KIP-860).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.replicas import assignment_error, partition_replicas, reassign
from kafkito.protocol.errors import ErrorCode

API_KEY = 45
VERSIONS = (0, 1)

_NO_REASSIGNMENT = "No partition reassignment is in progress."


class ReassignablePartition(Protocol):
    partition_index: int
    replicas: Sequence[int] | None  # None: cancel


class ReassignableTopic(Protocol):
    name: str
    partitions: Sequence[ReassignablePartition]


class AlterPartitionReassignmentsRequest(Protocol):
    """The fields of kafka-python's AlterPartitionReassignmentsRequest this handler reads."""

    allow_replication_factor_change: bool  # v1+ (true before)
    topics: Sequence[ReassignableTopic]


def _reassign(
    ctx: RequestContext, topic: str, p: ReassignablePartition, allow_rf_change: bool
) -> tuple[ErrorCode, str | None]:
    info = ctx.topics.get(topic)
    if info is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if not 0 <= p.partition_index < info.partitions:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{p.partition_index}."
    if p.replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, _NO_REASSIGNMENT  # none is ever ongoing
    message = assignment_error(p.replicas, ctx, None, p.partition_index)
    if message is not None:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, message
    current = partition_replicas(ctx, topic, p.partition_index)
    if not allow_rf_change and len(p.replicas) != len(current):
        return ErrorCode.INVALID_REPLICATION_FACTOR, (
            f"The replication factor is changed from {len(current)} to {len(p.replicas)} "
            "but option allowReplicationFactorChange is false."
        )
    if list(p.replicas) != current:
        reassign(ctx, topic, p.partition_index, p.replicas)  # complete at once (one shared log)
    return ErrorCode.NONE, None


def handle(ctx: RequestContext, request: AlterPartitionReassignmentsRequest) -> Any:
    allow_rf_change = ctx.version < 1 or bool(request.allow_replication_factor_change)
    responses = []
    for t in request.topics:
        rows = []
        for p in t.partitions:
            code, message = _reassign(ctx, t.name, p, allow_rf_change)
            rows.append(dict(partition_index=p.partition_index, error_code=code, error_message=message))
        responses.append(dict(name=t.name, partitions=rows))
    return ctx.response(
        throttle_time_ms=0,
        allow_replication_factor_change=allow_rf_change,
        error_code=ErrorCode.NONE,
        error_message=None,
        responses=responses,
    )
