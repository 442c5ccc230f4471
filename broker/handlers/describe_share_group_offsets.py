"""DescribeShareGroupOffsets (90, KIP-932): each share partition's start offset, from the share-state
persister; v1 adds the lag (KIP-1226): records from the start offset to the log end, less those whose
delivery is complete (-1 when the persisted state has no count).

A group that cannot be described carries its error and message and no topics; a partition without
share state has start offset -1; an unknown topic's partitions are UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.offsets import GroupStartOffsets
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.protocol.errors import ErrorCode

_OFF = "The version of API is not supported."
API_KEY = 90
VERSIONS = (0, 1)


class RequestTopic(Protocol):
    topic_name: str
    partitions: Sequence[int]


class RequestGroup(Protocol):
    group_id: str
    topics: Sequence[RequestTopic] | None


class DescribeShareGroupOffsetsRequestBody(Protocol):
    groups: Sequence[RequestGroup]


def _group(described: GroupStartOffsets) -> dict[str, Any]:
    return dict(
        group_id=described.group_id,
        topics=[
            dict(
                topic_name=t.name,
                topic_id=t.topic_id,
                partitions=[
                    dict(
                        partition_index=p.partition,
                        start_offset=p.start_offset,
                        leader_epoch=p.leader_epoch,
                        lag=p.lag,
                        error_code=p.error,
                        error_message=p.error_message,
                    )
                    for p in t.partitions
                ],
            )
            for t in described.topics
        ],
        error_code=described.error,
        error_message=described.error_message,
    )


def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequestBody) -> Any:
    if share_groups_off(ctx):
        off = [GroupStartOffsets(g.group_id, ErrorCode.UNSUPPORTED_VERSION, _OFF) for g in request.groups]
        return ctx.response(throttle_time_ms=0, groups=[_group(g) for g in off])
    groups = []
    for group in request.groups:
        topics = None if group.topics is None else [(t.topic_name, list(t.partitions)) for t in group.topics]
        groups.append(_group(ctx.groups.describe_share_group_offsets(group.group_id, topics)))
    return ctx.response(throttle_time_ms=0, groups=groups)
