"""OffsetFetch (9): committed offsets of a group, whatever its state; -1 where nothing is committed.

v0 read ZooKeeper: Kafka 3.9 without ZooKeeper answers every partition UNSUPPORTED_VERSION, as we do;
v1 first non-ZooKeeper version; v2 null topics = all committed partitions, top-level error code;
v3 throttle time; v4 no change; v5 committed_leader_epoch; v6 flexible; v7 require_stable
(UNSTABLE_OFFSET_COMMIT while a commit is being written, or while a transaction holds pending
offsets for the partition); v8 several groups, each answered on its own; v9 member id and epoch
(new protocol; ignored for classic groups); v10 topic ids instead of names (KIP-848 follow-up): a
topic id no topic has is answered UNKNOWN_TOPIC_ID for each of its partitions, and the committed
offsets of every partition (null topics) are listed under their topics' ids, those of topics that no
longer exist left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import PartitionOffset, TopicPartition
from kafkito.protocol.errors import ErrorCode

API_KEY = 9
VERSIONS = (0, 10)
TOPIC_IDS_SINCE = 10


class OffsetFetchTopic(Protocol):
    name: str  # up to v9
    topic_id: uuid.UUID  # v10+
    partition_indexes: Sequence[int]


class OffsetFetchGroup(Protocol):
    group_id: str | None
    topics: Sequence[OffsetFetchTopic] | None
    member_id: str | None  # v9+
    member_epoch: int  # v9+


class OffsetFetchRequestBody(Protocol):
    """The fields of kafka-python's OffsetFetchRequest this handler reads."""

    group_id: str | None  # before v8
    topics: Sequence[OffsetFetchTopic] | None  # before v8; null (v2+) = every committed partition
    groups: Sequence[OffsetFetchGroup]  # v8+
    require_stable: bool  # v7+


def _wanted(topics: Sequence[OffsetFetchTopic] | None) -> list[TopicPartition] | None:
    if topics is None:
        return None
    return [TopicPartition(t.name, i) for t in topics for i in t.partition_indexes]


def _by_topic(
    offsets: dict[TopicPartition, PartitionOffset], wanted: list[TopicPartition] | None
) -> dict[str, list[tuple[int, PartitionOffset]]]:
    topics: dict[str, list[tuple[int, PartitionOffset]]] = {}
    for tp in wanted if wanted is not None else sorted(offsets):
        topics.setdefault(tp.topic, []).append((tp.partition, offsets[tp]))
    return topics


def _partition_entry(index: int, o: PartitionOffset) -> dict[str, Any]:
    return dict(
        partition_index=index,
        committed_offset=o.offset,
        committed_leader_epoch=o.leader_epoch,
        metadata=o.metadata,
        error_code=o.error,
    )


def _topic_entries(topics: dict[str, list[tuple[int, PartitionOffset]]]) -> list[dict[str, Any]]:
    return [
        dict(
            name=name,
            partitions=[_partition_entry(index, o) for index, o in partitions],
        )
        for name, partitions in topics.items()
    ]


def _fetch(
    ctx: RequestContext,
    group_id: str | None,
    wanted: list[TopicPartition] | None,
    require_stable: bool,
    member: tuple[str | None, int] = (None, -1),
) -> tuple[ErrorCode, dict[str, list[tuple[int, PartitionOffset]]]]:
    error, offsets = ctx.groups.fetch_offsets(group_id, wanted, require_stable, *member)
    if error is not ErrorCode.NONE:
        if ctx.version < 2 and wanted is not None:
            # v1 has no top-level error: Kafka puts it on every partition asked for.
            failed = PartitionOffset(-1, "", -1, error)
            return error, _by_topic(dict.fromkeys(wanted, failed), wanted)
        return error, {}
    return error, _by_topic(offsets, wanted)


def handle(ctx: RequestContext, request: OffsetFetchRequestBody) -> Any:
    version = ctx.version
    require_stable = bool(request.require_stable) if version >= 7 else False
    if version >= TOPIC_IDS_SINCE:
        return ctx.response(
            throttle_time_ms=0, groups=[_group_by_ids(ctx, g, require_stable) for g in request.groups]
        )
    if version >= 8:
        groups = []
        for g in request.groups:
            member = (g.member_id, g.member_epoch) if version >= 9 else (None, -1)
            error, topics = _fetch(ctx, g.group_id, _wanted(g.topics), require_stable, member)
            groups.append(dict(group_id=g.group_id, topics=_topic_entries(topics), error_code=error))
        return ctx.response(throttle_time_ms=0, groups=groups)
    if version == 0:
        failed = PartitionOffset(-1, "", -1, ErrorCode.UNSUPPORTED_VERSION)
        wanted = _wanted(request.topics) or []
        return ctx.response(topics=_topic_entries(_by_topic(dict.fromkeys(wanted, failed), wanted)))
    error, topics = _fetch(ctx, request.group_id, _wanted(request.topics), require_stable)
    return ctx.response(throttle_time_ms=0, topics=_topic_entries(topics), error_code=error)


def _group_by_ids(ctx: RequestContext, g: OffsetFetchGroup, require_stable: bool) -> dict[str, Any]:
    """v10: one group's answer, its topics named by id."""
    topics = ctx.topics
    unknown: list[OffsetFetchTopic] = []
    wanted: list[TopicPartition] | None = None
    if g.topics is not None:
        wanted = []
        for t in g.topics:
            info = topics.get_by_id(t.topic_id)
            if info is None:
                unknown.append(t)
            else:
                wanted += (TopicPartition(info.name, i) for i in t.partition_indexes)
    member = (g.member_id, g.member_epoch)
    error, found = _fetch(ctx, g.group_id, wanted, require_stable, member)
    entries = []
    for entry in _topic_entries(found):
        info = topics.get(entry.pop("name"))
        if info is not None:
            entries.append(dict(entry, topic_id=info.topic_id))
    missing = PartitionOffset(-1, "", -1, ErrorCode.UNKNOWN_TOPIC_ID)
    for t in unknown if error is ErrorCode.NONE else ():
        entries.append(
            dict(
                topic_id=t.topic_id,
                partitions=[_partition_entry(i, missing) for i in t.partition_indexes],
            )
        )
    return dict(group_id=g.group_id, topics=entries, error_code=error)
