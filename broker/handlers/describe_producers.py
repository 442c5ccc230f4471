"""DescribeProducers (61): the active producers of partitions (idempotent and transactional).

v0 only (flexible). Each entry comes from the partition's producer state
(`PartitionLog.producer_snapshot()`): id, epoch, last sequence and timestamp, coordinator epoch,
and the first offset of its open transaction (-1 when none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 61
VERSIONS = (0, 0)


class TopicRequest(Protocol):
    name: str
    partition_indexes: Sequence[int]


class DescribeProducersRequestBody(Protocol):
    """The fields of kafka-python's DescribeProducersRequest this handler reads."""

    topics: Sequence[TopicRequest]


def _partition(ctx: RequestContext, topic: str, index: int) -> dict[str, Any]:
    try:
        producers = ctx.topics.get_log(topic, index).producer_snapshot()
    except LogError as exc:
        return dict(
            partition_index=index, error_code=exc.code, error_message=exc.message or None, active_producers=[]
        )
    return dict(
        partition_index=index,
        error_code=ErrorCode.NONE,
        error_message=None,
        active_producers=[
            dict(
                producer_id=p.producer_id,
                producer_epoch=p.producer_epoch,
                last_sequence=p.last_sequence,
                last_timestamp=p.last_timestamp,
                coordinator_epoch=p.coordinator_epoch,
                current_txn_start_offset=p.current_txn_start_offset,
            )
            for p in producers
        ],
    )


def handle(ctx: RequestContext, request: DescribeProducersRequestBody) -> Any:
    topics = [
        dict(name=t.name, partitions=[_partition(ctx, t.name, i) for i in t.partition_indexes])
        for t in request.topics
    ]
    return ctx.response(throttle_time_ms=0, topics=topics)
