"""ElectLeaders (43): elect the preferred (or, unclean, any live) replica as a partition's leader.

As Kafka's controller: an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION; a preferred
election where the preferred replica already leads, or an unclean one where the partition has a leader,
is ELECTION_NOT_NEEDED; a preferred replica that is stopped or out of sync, or no live replica for an
unclean one, is ELIGIBLE_LEADERS_NOT_AVAILABLE. Asked for every partition (null topics), the answer
lists only the partitions whose election was needed. On one node the node is every partition's
preferred replica and leader, so an election is never needed.

v1 election type + top-level error code; v2 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.replicas import (
    elect,
    live_nodes,
    partition_isr,
    partition_leader,
    partition_replicas,
)
from kafkito.protocol.errors import ErrorCode

API_KEY = 43
VERSIONS = (0, 2)

PREFERRED, UNCLEAN = 0, 1
_NOT_NEEDED = "Leader election not needed for topic partition."


class TopicPartitions(Protocol):
    topic: str
    partitions: Sequence[int]


class ElectLeadersRequest(Protocol):
    """The fields of kafka-python's ElectLeadersRequest this handler reads."""

    election_type: int  # v1+ (v0: preferred)
    topic_partitions: Sequence[TopicPartitions] | None  # None: every partition


def _elect(ctx: RequestContext, election: int, topic: str, partition: int) -> tuple[ErrorCode, str | None]:
    info = ctx.topics.get(topic)
    if info is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    if not 0 <= partition < info.partitions:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    leader = partition_leader(ctx, topic, partition)
    replicas = partition_replicas(ctx, topic, partition)
    if (election == PREFERRED and leader == replicas[0]) or (election == UNCLEAN and leader >= 0):
        return ErrorCode.ELECTION_NOT_NEEDED, _NOT_NEEDED
    live = live_nodes(ctx)
    if election == PREFERRED:
        isr = partition_isr(ctx, topic, partition)
        candidates = [replicas[0]] if replicas[0] in live and replicas[0] in isr else []
    else:
        candidates = [r for r in replicas if r in live]
    if not candidates:
        return (
            ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
            f"Failed to elect leader for partition {topic}-{partition}",
        )
    elect(ctx, topic, partition, candidates[0])
    return ErrorCode.NONE, None


def _results(ctx: RequestContext, request: ElectLeadersRequest, election: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.topic_partitions is None:
        for info in ctx.topics.all():
            rows = []
            for p in range(info.partitions):
                code, message = _elect(ctx, election, info.name, p)
                if code != ErrorCode.ELECTION_NOT_NEEDED:
                    rows.append(dict(partition_id=p, error_code=code, error_message=message))
            if rows:
                out.append(dict(topic=info.name, partition_result=rows))
        return out
    for t in request.topic_partitions:
        rows = []
        for p in t.partitions:
            code, message = _elect(ctx, election, t.topic, p)
            rows.append(dict(partition_id=p, error_code=code, error_message=message))
        out.append(dict(topic=t.topic, partition_result=rows))
    return out


def handle(ctx: RequestContext, request: ElectLeadersRequest) -> Any:
    election = request.election_type if ctx.version >= 1 else PREFERRED
    if election not in (PREFERRED, UNCLEAN):
        message = f"Unknown election type {election}"
        results = [
            dict(
                topic=t.topic,
                partition_result=[
                    dict(partition_id=p, error_code=ErrorCode.INVALID_REQUEST, error_message=message)
                    for p in t.partitions
                ],
            )
            for t in request.topic_partitions or ()
        ]
        return ctx.response(
            throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, replica_election_results=results
        )
    return ctx.response(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        replica_election_results=_results(ctx, request, election),
    )
