"""ListOffsets (2): earliest (-2), latest (-1), max timestamp (-3) or the first offset at a timestamp.

v0 up to max_num_offsets offsets per partition, chosen by segment (`broker/log/legacy_offsets.py`);
v1 one offset + timestamp; v2 isolation level (read_committed: LATEST is the last stable offset,
and a timestamp lookup finds only offsets below it); v4 leader epoch; v6 flexible; v7 max timestamp (KIP-734);
v8 earliest local (-4) (the same as earliest here); v9 latest tiered (-5): offset -1, as Kafka answers
for a log without remote storage; v10 timeout_ms (answers here never wait); v11 earliest pending
upload (-6, KIP-1023): offset -1, as Kafka answers for a log without remote storage. A negative time
the version does not know (-3 below v7, -4 below v8, -5 below v9, -6 below v11) is UNSUPPORTED_VERSION
whether or not the partition exists, as in Kafka. As Kafka, a topic listed twice is answered as one
entry, and a partition asked for twice is answered once, with INVALID_REQUEST.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.broker.log.legacy_offsets import offsets_before
from kafkito.protocol.errors import ErrorCode

API_KEY = 2
VERSIONS = (0, 11)

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6


class ListOffsetsPartition(Protocol):
    partition_index: int
    timestamp: int
    max_num_offsets: int  # v0


class ListOffsetsTopic(Protocol):
    name: str
    partitions: Sequence[ListOffsetsPartition]


class ListOffsetsRequest(Protocol):
    """The fields of kafka-python's ListOffsetsRequest this handler reads."""

    isolation_level: int  # from v2
    topics: Sequence[ListOffsetsTopic]


READ_COMMITTED = 1
# The first version that knows each special negative time (LATEST and EARLIEST: every version).
_TIME_SINCE = {MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9, EARLIEST_PENDING_UPLOAD: 11}


def _known_time(timestamp: int, version: int) -> bool:
    return timestamp >= EARLIEST or version >= _TIME_SINCE.get(timestamp, 0x7FFF)


def _lookup(
    ctx: RequestContext, topic: str, partition: int, timestamp: int, committed: bool
) -> dict[str, Any]:
    # leader_epoch -1 unless an offset is found (an error, or no offset at that time, as Kafka's
    # defaults); a found offset is in epoch 0, the only one a kafkito partition has.
    out: dict[str, Any] = dict(
        partition_index=partition, error_code=ErrorCode.NONE, timestamp=-1, offset=-1, leader_epoch=-1
    )
    if not _known_time(timestamp, ctx.version):
        out["error_code"] = ErrorCode.UNSUPPORTED_VERSION
        return out
    try:
        plog = ctx.topics.get_log(topic, partition)
    except LogError as exc:
        out["error_code"] = exc.code
        return out
    fetchable = plog.last_stable_offset if committed else plog.high_watermark
    if timestamp == LATEST:
        out["offset"] = fetchable
    elif timestamp in (EARLIEST, EARLIEST_LOCAL):
        out["offset"] = plog.log_start_offset
    elif timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        pass  # nothing is tiered, nothing waits for upload: no offset, no epoch
    elif timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp_offset()
        if found is not None:
            out["timestamp"], out["offset"] = found.timestamp, found.offset
    else:
        found = plog.offset_for_timestamp(timestamp)
        if found is not None and found.offset < fetchable:
            out["timestamp"], out["offset"] = found.timestamp, found.offset
    if out["offset"] >= 0:
        out["leader_epoch"] = 0
    return out


def _lookup_v0(ctx: RequestContext, topic: str, p: ListOffsetsPartition) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        partition_index=p.partition_index, error_code=ErrorCode.NONE, old_style_offsets=[]
    )
    if p.timestamp < EARLIEST:  # v0 knows only LATEST and EARLIEST among the negative times
        out["error_code"] = ErrorCode.UNSUPPORTED_VERSION
        return out
    try:
        plog = ctx.topics.get_log(topic, p.partition_index)
        out["old_style_offsets"] = offsets_before(plog, p.timestamp, p.max_num_offsets)
    except LogError as exc:
        out["error_code"] = exc.code
    return out


def _asked(request: ListOffsetsRequest) -> dict[str, list[ListOffsetsPartition]]:
    """The partitions asked for, by topic: a topic listed twice is one topic."""
    asked: dict[str, list[ListOffsetsPartition]] = {}
    for t in request.topics:
        asked.setdefault(t.name, []).extend(t.partitions)
    return asked


def _answers(
    ctx: RequestContext, name: str, partitions: list[ListOffsetsPartition], committed: bool
) -> list[Any]:
    """Each partition's answer, once; a partition asked for twice is INVALID_REQUEST."""
    indexes = [p.partition_index for p in partitions]
    repeated = {i for i in indexes if indexes.count(i) > 1} if len(set(indexes)) < len(indexes) else set()
    answered: set[int] = set()
    out: list[Any] = []
    for p in partitions:
        index = p.partition_index
        if index in answered:
            continue
        answered.add(index)
        if index in repeated:
            out.append(_invalid(ctx.version, index))
        elif ctx.version == 0:
            out.append(_lookup_v0(ctx, name, p))
        else:
            out.append(_lookup(ctx, name, index, p.timestamp, committed))
    return out


def _invalid(version: int, index: int) -> dict[str, Any]:
    error = ErrorCode.INVALID_REQUEST
    if version == 0:
        return dict(partition_index=index, error_code=error, old_style_offsets=[])
    return dict(partition_index=index, error_code=error, timestamp=-1, offset=-1, leader_epoch=-1)


def handle(ctx: RequestContext, request: ListOffsetsRequest) -> Any:
    committed = ctx.version >= 2 and request.isolation_level == READ_COMMITTED
    topics = [
        dict(name=name, partitions=_answers(ctx, name, partitions, committed))
        for name, partitions in _asked(request).items()
    ]
    if ctx.version == 0:
        return ctx.response(topics=topics)
    return ctx.response(throttle_time_ms=0, topics=topics)
