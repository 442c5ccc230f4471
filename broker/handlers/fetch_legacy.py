"""Fetch v0-v3: the records down-converted to the message format the version reads, as Kafka does.

v0-v1 read magic 0, v2-v3 magic 1 (timestamps); v3 adds the response's max_bytes. Read uncommitted
(these versions have no isolation level): transactional records are returned, control batches not.
v0-v2 have a hard per-partition limit: a first batch larger than the partition's max bytes is not
returned (the consumer then reports a record too large), from v3 it is returned whole.
A topic with message.downconversion.enable=false answers them UNSUPPORTED_VERSION, as Kafka 3.9 does.
Chosen once per version by dispatch (`fetch.handler_for_version`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.fetch_wait import (
    READ_UNCOMMITTED,
    DelayedFetch,
    FetchResult,
    PartitionFetch,
    read_partitions,
)
from kafkito.broker.handlers.fetch import API_KEY, FetchRequest, wanted_partitions
from kafkito.broker.log.batch import iter_headers
from kafkito.broker.log.errors import LogError
from kafkito.broker.log.legacy_format import down_convert
from kafkito.protocol.errors import ErrorCode

VERSIONS = (0, 3)
FIRST_MAX_BYTES = 3  # the response-level max_bytes, and one batch whole whatever its size
_UNBOUNDED = 0x7FFFFFFF


def _magic(version: int) -> int:
    return 0 if version <= 1 else 1


def _within(records: bytes, limit: int) -> bytes:
    """The whole batches of `records` that fit in `limit` bytes (v0-v2: no batch returned whole)."""
    end = 0
    for pos, header in iter_headers(records):
        if pos + header.size > limit:
            break
        end = pos + header.size
    return records[:end]


def _partition(ctx: RequestContext, p: PartitionFetch, data: Any) -> dict[str, Any]:
    version = ctx.version
    error = data.error
    if error == ErrorCode.KAFKA_STORAGE_ERROR:
        error = ErrorCode.NOT_LEADER_OR_FOLLOWER  # clients before Fetch v6 do not know the storage error
    elif error == ErrorCode.NONE and not _down_conversion_enabled(ctx, p):
        return dict(partition_index=p.partition, error_code=ErrorCode.UNSUPPORTED_VERSION, high_watermark=-1)
    records = data.records
    if records and version < FIRST_MAX_BYTES:
        records = _within(records, p.max_bytes)
    if records:
        try:
            records = down_convert(records, _magic(version), p.fetch_offset)
        except LogError as exc:
            error, records = exc.code, b""
    return dict(
        partition_index=p.partition, error_code=error, high_watermark=data.high_watermark, records=records
    )


def _down_conversion_enabled(ctx: RequestContext, p: PartitionFetch) -> bool:
    """The topic's message.downconversion.enable (false: Kafka 3.9 answers UNSUPPORTED_VERSION)."""
    try:
        return ctx.topics.get_log(p.topic, p.partition).config.message_downconversion_enable
    except LogError:
        return True


def _response(ctx: RequestContext, wanted: list[PartitionFetch], result: FetchResult) -> Any:
    topics: list[dict[str, Any]] = []
    by_name: dict[str, list[dict[str, Any]]] = {}
    for p, data in zip(wanted, result.partitions, strict=True):
        parts = by_name.get(p.topic)
        if parts is None:
            parts = by_name[p.topic] = []
            topics.append(dict(topic=p.topic, partitions=parts))
        parts.append(_partition(ctx, p, data))
    return ctx.response(throttle_time_ms=0, responses=topics)


def handle(ctx: RequestContext, request: FetchRequest) -> Any:
    topics = ctx.topics
    wanted = wanted_partitions(ctx, request)
    max_bytes = _UNBOUNDED
    if ctx.version >= FIRST_MAX_BYTES and request.max_bytes > 0:
        max_bytes = request.max_bytes
    result = read_partitions(topics, wanted, max_bytes, READ_UNCOMMITTED)
    if request.max_wait_ms <= 0 or not wanted or result.has_error or result.total_bytes >= request.min_bytes:
        return _response(ctx, wanted, result)
    done: asyncio.Future[FetchResult] = asyncio.get_running_loop().create_future()
    op = DelayedFetch(
        request.max_wait_ms, topics, wanted, request.min_bytes, max_bytes, done, READ_UNCOMMITTED
    )
    ctx.fetches.park(op, {(p.topic, p.partition) for p in wanted})
    return _await_response(ctx, wanted, done)


async def _await_response(
    ctx: RequestContext, wanted: list[PartitionFetch], done: asyncio.Future[FetchResult]
) -> Any:
    return _response(ctx, wanted, await done)


__all__ = ["API_KEY", "VERSIONS", "handle"]
