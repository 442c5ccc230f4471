"""OffsetCommit (8): validate against the group, then answer once the records are in `__consumer_offsets`.

v2 retention_time_ms (an explicit expiry, v2-v4 only); v3 throttle time; v4 no change; v5 drops
retention_time_ms; v6 committed_leader_epoch; v7 group_instance_id (KIP-345); v8 flexible;
v9 new-protocol member epochs (no change for classic groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import OffsetAndMetadata, OffsetCommitRequest, TopicPartition
from kafkito.broker.handlers.parked import Parked
from kafkito.protocol.errors import ErrorCode

API_KEY = 8
VERSIONS = (2, 9)

DEFAULT_RETENTION_TIME = -1


class OffsetCommitPartition(Protocol):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int  # v6+
    committed_metadata: str | None


class OffsetCommitTopic(Protocol):
    name: str
    partitions: Sequence[OffsetCommitPartition]


class OffsetCommitRequestBody(Protocol):
    """The fields of kafka-python's OffsetCommitRequest this handler reads."""

    group_id: str | None
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None  # v7+
    retention_time_ms: int  # v2-v4
    topics: Sequence[OffsetCommitTopic]


def handle(ctx: RequestContext, request: OffsetCommitRequestBody) -> Any:
    version = ctx.version
    coordinator = ctx.groups
    now = coordinator.clock.now_ms()
    retention = request.retention_time_ms if version <= 4 else DEFAULT_RETENTION_TIME
    expire = None if retention == DEFAULT_RETENTION_TIME else now + retention
    order: list[tuple[str, list[int]]] = []
    rejected: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    topics = ctx.topics
    for topic in request.topics:
        name = topic.name
        info = topics.get(name)
        indexes = []
        for p in topic.partitions:
            tp = TopicPartition(name, p.partition_index)
            indexes.append(p.partition_index)
            if info is None or not 0 <= p.partition_index < info.partitions:
                rejected[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetAndMetadata(
                p.committed_offset,
                p.committed_metadata or "",  # null metadata is stored as ""
                p.committed_leader_epoch if version >= 6 else -1,
                now,
                expire,
            )
        order.append((name, indexes))

    def build(errors: dict[TopicPartition, ErrorCode]) -> Any:
        merged = {**errors, **rejected}
        return ctx.response(
            throttle_time_ms=0,
            topics=[
                dict(
                    name=name,
                    partitions=[
                        dict(partition_index=i, error_code=merged[TopicPartition(name, i)]) for i in indexes
                    ],
                )
                for name, indexes in order
            ],
        )

    if not offsets:
        return build({})
    parked: Parked[dict[TopicPartition, ErrorCode]] = Parked(build)
    commit = OffsetCommitRequest(
        request.group_id,
        request.member_id,
        request.group_instance_id if version >= 7 else None,
        request.generation_id_or_member_epoch,
        offsets,
    )
    coordinator.commit_offsets(commit, parked.callback)
    return parked.response()
