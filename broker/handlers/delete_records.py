"""DeleteRecords (21): move a partition's log start offset forward (-1 = to the high watermark).

A topic whose cleanup.policy lacks `delete` (`compact` alone) keeps its records: POLICY_VIOLATION for
each of its partitions, whatever the offset, as Kafka's log refuses to move its start offset (the
answer has no message field: the reason is logged). `compact,delete` deletes as `delete` does.
v1 no change; v2 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import structlog

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 21
VERSIONS = (0, 2)

log = structlog.get_logger("kafkito.delete_records")


class DeleteRecordsPartition(Protocol):
    partition_index: int
    offset: int


class DeleteRecordsTopic(Protocol):
    name: str
    partitions: Sequence[DeleteRecordsPartition]


class DeleteRecordsRequest(Protocol):
    """The fields of kafka-python's DeleteRecordsRequest this handler reads."""

    topics: Sequence[DeleteRecordsTopic]


def _delete(ctx: RequestContext, topic: str, partition: int, offset: int) -> dict[str, Any]:
    try:
        plog = ctx.topics.get_log(topic, partition)
        if not plog.config.delete:
            log.info("delete_records.refused_by_policy", topic=topic, partition=partition,
                     cleanup_policy=sorted(plog.config.cleanup_policy))  # fmt: skip
            return dict(partition_index=partition, low_watermark=-1, error_code=ErrorCode.POLICY_VIOLATION)
        low = plog.delete_records(offset)
    except LogError as exc:
        return dict(partition_index=partition, low_watermark=-1, error_code=exc.code)
    return dict(partition_index=partition, low_watermark=low, error_code=ErrorCode.NONE)


def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> Any:
    topics = [
        dict(
            name=t.name, partitions=[_delete(ctx, t.name, p.partition_index, p.offset) for p in t.partitions]
        )
        for t in request.topics
    ]
    return ctx.response(throttle_time_ms=0, topics=topics)
