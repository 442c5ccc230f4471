"""The server-side assignor of share groups (Kafka's "simple" assignor for share groups), a pure
function.

Each topic is shared among the members subscribed to it. With at least as many partitions as
members, every partition goes to one member (round robin over the members, so the counts differ by
at most one); with more members than partitions, every member gets one partition and each partition
is shared by several members (round robin over the partitions). Members and partitions are taken in
a fixed order (member ids sorted), so the same group and topics always give the same assignment.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from kafkito.broker.coordinator.share.records import Assignment


def assign(
    subscriptions: Mapping[str, frozenset[uuid.UUID]], partitions: Mapping[uuid.UUID, int]
) -> dict[str, Assignment]:
    """Every member of `subscriptions` (member id -> subscribed topic ids) gets its assignment
    (maybe empty) of the topics in `partitions` (topic id -> partition count)."""
    result: dict[str, dict[uuid.UUID, list[int]]] = {member: {} for member in subscriptions}
    for topic_id in sorted(partitions, key=lambda t: t.bytes):
        count = partitions[topic_id]
        members = sorted(m for m, topics in subscriptions.items() if topic_id in topics)
        if not members or count <= 0:
            continue
        if count >= len(members):
            for partition in range(count):
                result[members[partition % len(members)]].setdefault(topic_id, []).append(partition)
        else:
            for index, member in enumerate(members):
                result[member].setdefault(topic_id, []).append(index % count)
    return {member: canonical(topics) for member, topics in result.items()}


def canonical(topics: Mapping[uuid.UUID, list[int] | frozenset[int] | tuple[int, ...]]) -> Assignment:
    """An assignment in its one written order: topics by id bytes, partitions ascending, none empty."""
    return tuple(
        (topic_id, tuple(sorted(topics[topic_id])))
        for topic_id in sorted(topics, key=lambda t: t.bytes)
        if topics[topic_id]
    )
