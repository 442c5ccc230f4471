"""Fetch (1): record batches spliced from the partition logs; waits in the purgatory for min_bytes.

v0-v3 read message formats v0/v1: `fetch_legacy.py` answers them (chosen once per version);
v4 isolation level + last stable offset (read_committed reads up to it and gets the aborted
transactions overlapping what it reads); v5 log start offset; v7 sessions (KIP-227: we answer every
fetch as a full, sessionless one: session id 0); v9 current leader epoch; v11 rack id;
v12 flexible; v13 topic ids; v15 replica state; v16 node endpoints; v17 a follower's directory id;
v18 a follower's high watermark (KIP-1166, tagged): both only for followers, the answer is v16's.
The response is struct-encoded (broker/fetch_response.py): it carries nearly every byte we send. A
partition's records of `REGION_AT` bytes or more stay in their segment file and go out with sendfile
(broker/spliced.py); smaller reads are cheaper to copy than to splice.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.fetch_response import PartitionAnswer, TopicAnswer, encode_fetch_response
from kafkito.broker.fetch_wait import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    DelayedFetch,
    FetchResult,
    PartitionFetch,
    read_partitions,
)
from kafkito.broker.spliced import Spliced
from kafkito.protocol.errors import ErrorCode

API_KEY = 1
VERSIONS = (0, 18)
FIRST_V2_FORMAT = 4  # below it, the records are down-converted (fetch_legacy.py)

_UNBOUNDED = 0x7FFFFFFF
# Below this, one pread and a copy into the reply cost less than a descriptor duplicate, a sendfile
# and a send of the surrounding bytes (bench/datapath.py, small fetches).
REGION_AT = 16 * 1024
_NO_ABORTED: tuple[tuple[int, int], ...] = ()


class FetchPartition(Protocol):
    partition: int
    fetch_offset: int
    partition_max_bytes: int


class FetchTopic(Protocol):
    topic: str  # up to v12
    topic_id: uuid.UUID  # from v13 (below it kafka-python leaves None, only carried along)
    partitions: Sequence[FetchPartition]


class FetchRequest(Protocol):
    """The fields of kafka-python's FetchRequest this handler reads."""

    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int  # 0 read_uncommitted, 1 read_committed
    topics: Sequence[FetchTopic]


def handler_for_version(version: int) -> Any:
    """The handler of one version (dispatch asks once per version): v0-v3 down-convert."""
    import sys

    if version < FIRST_V2_FORMAT:
        from kafkito.broker.handlers import fetch_legacy

        return fetch_legacy
    return sys.modules[__name__]


def wanted_partitions(ctx: RequestContext, request: FetchRequest) -> list[PartitionFetch]:
    topics = ctx.topics
    by_id = ctx.version >= 13
    wanted: list[PartitionFetch] = []
    unreadable = _unreadable(ctx, request) if ctx.authorizer is not None else ()
    for t in request.topics:
        if by_id:
            info = topics.get_by_id(t.topic_id)
            name = info.name if info else ""
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            info = topics.get(t.topic)
            name = t.topic
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        for p in t.partitions:
            error = ErrorCode.NONE
            if name in unreadable and (info is not None or not by_id):
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif info is None:
                error = missing
            elif not 0 <= p.partition < info.partitions:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            wanted.append(
                PartitionFetch(name, t.topic_id, p.partition, p.fetch_offset, p.partition_max_bytes, error)
            )
    return wanted


def _unreadable(ctx: RequestContext, request: FetchRequest) -> set[str]:
    """The topics of a consumer's fetch its principal may not READ (a follower's is checked before)."""
    from kafkito.broker.security.acls import AclOperation, ResourceType
    from kafkito.broker.security.authorizer import denied

    if ctx.version >= 13:
        infos = (ctx.topics.get_by_id(t.topic_id) for t in request.topics)
        names = {info.name for info in infos if info is not None}
    else:
        names = {t.topic for t in request.topics}
    return denied(ctx, AclOperation.READ, ResourceType.TOPIC, names)


def _response(ctx: RequestContext, wanted: list[PartitionFetch], result: FetchResult) -> bytes | Spliced:
    """The encoded response body, partitions grouped under their topics in request order."""
    topics: list[TopicAnswer] = []
    index: dict[Any, list[PartitionAnswer]] = {}
    by_id = ctx.version >= 13
    for p, data in zip(wanted, result.partitions, strict=True):
        key = p.topic_id if by_id else p.topic
        parts = index.get(key)
        if parts is None:
            parts = index[key] = []
            topics.append(TopicAnswer(p.topic, p.topic_id, parts))
        parts.append(
            PartitionAnswer(
                p.partition,
                data.error,
                data.high_watermark,
                data.log_start_offset,
                data.records,
                data.last_stable_offset,
                # A partition refused before the read (unknown, unauthorized) carries Kafka's
                # partitionResponse defaults: an empty list, where a read's own error carries null.
                _NO_ABORTED if p.error else data.aborted,
            )
        )
    return encode_fetch_response(ctx.version, 0, topics)


def handle(ctx: RequestContext, request: FetchRequest) -> Any:
    topics = ctx.topics
    wanted = wanted_partitions(ctx, request)
    max_bytes = request.max_bytes if request.max_bytes > 0 else _UNBOUNDED
    isolation = READ_COMMITTED if request.isolation_level == READ_COMMITTED else READ_UNCOMMITTED
    result = read_partitions(topics, wanted, max_bytes, isolation, REGION_AT)
    if request.max_wait_ms <= 0 or not wanted or result.has_error or result.total_bytes >= request.min_bytes:
        return _response(ctx, wanted, result)
    done: asyncio.Future[FetchResult] = asyncio.get_running_loop().create_future()
    op = DelayedFetch(
        request.max_wait_ms, topics, wanted, request.min_bytes, max_bytes, done, isolation, REGION_AT
    )
    ctx.fetches.park(op, {(p.topic, p.partition) for p in wanted})
    return _await_response(ctx, wanted, done)


async def _await_response(
    ctx: RequestContext, wanted: list[PartitionFetch], done: asyncio.Future[FetchResult]
) -> bytes | Spliced:
    return _response(ctx, wanted, await done)
