"""ListPartitionReassignments (46): the partitions whose replica set is being moved.

A reassignment here completes the moment it is accepted (AlterPartitionReassignments: every target is
a set of live nodes that already hold the data), so none is ever ongoing and the answer lists no
partition, whichever topics are asked for (Kafka skips topics and partitions that do not exist).

v0 only (flexible).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 46
VERSIONS = (0, 0)


class ListPartitionReassignmentsTopic(Protocol):
    name: str
    partition_indexes: Sequence[int]


class ListPartitionReassignmentsRequest(Protocol):
    """The fields of kafka-python's ListPartitionReassignmentsRequest this handler reads."""

    topics: Sequence[ListPartitionReassignmentsTopic] | None  # None: every topic


def ongoing(ctx: RequestContext, topic: str, partition: int) -> tuple[list[int], list[int]] | None:
    """(adding, removing) replicas of a partition being reassigned; None when it is not."""
    return None


def handle(ctx: RequestContext, request: ListPartitionReassignmentsRequest) -> Any:
    topics = ctx.topics
    wanted = (
        [(t.name, list(t.partition_indexes)) for t in request.topics]
        if request.topics is not None
        else [(t.name, list(range(t.partitions))) for t in topics.all()]
    )
    entries = []
    for name, partitions in wanted:
        info = topics.get(name)
        if info is None:
            continue
        rows = []
        for p in partitions:
            moving = ongoing(ctx, name, p) if 0 <= p < info.partitions else None
            if moving is not None:
                adding, removing = moving
                rows.append(
                    dict(
                        partition_index=p,
                        replicas=[ctx.cluster.node_id],
                        adding_replicas=adding,
                        removing_replicas=removing,
                    )
                )
        if rows:
            entries.append(dict(name=name, partitions=rows))
    return ctx.response(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, topics=entries)
