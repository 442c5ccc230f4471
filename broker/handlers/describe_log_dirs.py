"""DescribeLogDirs (35): the broker's log dir, the partitions in it and their sizes.

As Kafka: one result per log dir (kafkito keeps its partitions in the first of `log.dirs`), its absolute
path, each hosted partition asked for (null topics: all of them, internal ones included; partitions
not hosted are left out) with its size on disk, its offset lag (log end offset minus high watermark)
and is_future false (no AlterReplicaLogDirs move is ever in flight). An offline dir is answered with
KAFKA_STORAGE_ERROR and no topics.

v1 no change; v2 flexible; v3 top-level error code; v4 total and usable bytes of the volume; v5 whether
the dir is cordoned (KIP-1066: no new partitions placed on it), never here, as in Kafka without
`cordoned.log.dirs`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 35
VERSIONS = (0, 5)


class DescribableLogDirTopic(Protocol):
    topic: str
    partitions: Sequence[int]


class DescribeLogDirsRequest(Protocol):
    """The fields of kafka-python's DescribeLogDirsRequest this handler reads."""

    topics: Sequence[DescribableLogDirTopic] | None  # None: every partition


def _wanted(ctx: RequestContext, request: DescribeLogDirsRequest) -> list[tuple[str, list[int]]]:
    if request.topics is None:
        return [(t.name, list(range(t.partitions))) for t in ctx.topics.all()]
    merged: dict[str, set[int]] = {}
    for t in request.topics:
        merged.setdefault(t.topic, set()).update(t.partitions)
    return [(name, sorted(ps)) for name, ps in sorted(merged.items())]


def _topics(ctx: RequestContext, request: DescribeLogDirsRequest) -> list[dict[str, Any]]:
    out = []
    for name, partitions in _wanted(ctx, request):
        rows = []
        for p in partitions:
            try:
                plog = ctx.topics.get_log(name, p)
            except LogError:
                continue  # not hosted here
            lag = max(0, plog.log_end_offset - plog.high_watermark)
            rows.append(
                dict(partition_index=p, partition_size=plog.size_bytes, offset_lag=lag, is_future_key=False)
            )
        if rows:
            out.append(dict(name=name, partitions=rows))
    return out


def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> Any:
    health = ctx.topics.log_dir()
    path = os.path.abspath(health.path)
    result: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        log_dir=path,
        topics=[],
        total_bytes=-1,
        usable_bytes=-1,
        is_cordoned=False,
    )
    if health.offline:
        result["error_code"] = ErrorCode.KAFKA_STORAGE_ERROR
    else:
        result["topics"] = _topics(ctx, request)
        try:
            usage = shutil.disk_usage(path)
            result.update(total_bytes=usage.total, usable_bytes=usage.free)
        except OSError:
            pass  # unknown sizes stay -1, as Kafka's defaults
    return ctx.response(throttle_time_ms=0, error_code=ErrorCode.NONE, results=[result])
