"""OffsetForLeaderEpoch (23): the end offset of a leader epoch; there is one epoch (0) on this broker.

v0 end offsets only; v1 leader epoch in the response; v2 current leader epoch; v3 replica id; v4 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 23
VERSIONS = (0, 4)

LEADER_EPOCH = 0


class EpochPartition(Protocol):
    partition: int
    current_leader_epoch: int
    leader_epoch: int


class EpochTopic(Protocol):
    topic: str
    partitions: Sequence[EpochPartition]


class OffsetForLeaderEpochRequest(Protocol):
    """The fields of kafka-python's OffsetForLeaderEpochRequest this handler reads."""

    topics: Sequence[EpochTopic]


def _end_offset(ctx: RequestContext, topic: str, p: EpochPartition) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE, partition=p.partition, leader_epoch=-1, end_offset=-1
    )
    try:
        plog = ctx.topics.get_log(topic, p.partition)
    except LogError as exc:
        out["error_code"] = exc.code
        return out
    if p.current_leader_epoch > LEADER_EPOCH:
        out["error_code"] = ErrorCode.UNKNOWN_LEADER_EPOCH
    elif p.leader_epoch >= LEADER_EPOCH:
        out.update(leader_epoch=LEADER_EPOCH, end_offset=plog.log_end_offset)
    return out


def handle(ctx: RequestContext, request: OffsetForLeaderEpochRequest) -> Any:
    topics = [
        dict(topic=t.topic, partitions=[_end_offset(ctx, t.topic, p) for p in t.partitions])
        for t in request.topics
    ]
    return ctx.response(throttle_time_ms=0, topics=topics)
