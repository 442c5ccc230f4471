"""Kafka's `range` server-side assignor (Kafka 4's): per topic, contiguous ranges of partitions to its
subscribers in a fixed member order; the first `partitions % subscribers` get one more.

The order is static members first, by instance id, then the others by member id. When every member
subscribes to the same topics, member k gets the same range of every topic with the same partition
count (co-partitioning, for joins). Stickiness comes from that order: static members keep their
ranges across restarts as long as the members and topics stay the same; a dynamic member's ranges
depend only on where its id falls among the others.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from kafkito.broker.coordinator.consumer.assignors.common import effective_subscriptions, topic_order
from kafkito.broker.coordinator.consumer.assignors.spec import GroupAssignment, MemberSpec, TopicSpec


def member_order(members: Mapping[str, MemberSpec]) -> list[str]:
    """Static members first (by instance id), then dynamic members (by member id)."""

    def key(member_id: str) -> tuple[bool, str, str]:
        instance_id = members[member_id].instance_id
        return (instance_id is None, instance_id or "", member_id)

    return sorted(members, key=key)


class RangeAssignor:
    name = "range"

    def assign(
        self, members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec]
    ) -> GroupAssignment:
        subscriptions = effective_subscriptions(members, topics)
        result: GroupAssignment = {member_id: {} for member_id in members}
        subscribers: dict[uuid.UUID, list[str]] = {}
        for member_id in member_order(members):
            for topic_id in subscriptions[member_id]:
                subscribers.setdefault(topic_id, []).append(member_id)
        for topic_id in topic_order(subscribers, topics):
            ordered = subscribers[topic_id]
            minimum, extra = divmod(topics[topic_id].num_partitions, len(ordered))
            start = 0
            for position, member_id in enumerate(ordered):
                end = start + minimum + (1 if position < extra else 0)
                if end > start:
                    result[member_id][topic_id] = frozenset(range(start, end))
                start = end
        return result
