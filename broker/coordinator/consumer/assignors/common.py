"""What the uniform builders share: the effective subscriptions, the topic order, the partitions a
member may keep from its current assignment, rack matching and the result's shape."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from kafkito.broker.coordinator.consumer.assignors.spec import GroupAssignment, MemberSpec, TopicSpec

TopicPartition = tuple[uuid.UUID, int]


def effective_subscriptions(
    members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec]
) -> dict[str, frozenset[uuid.UUID]]:
    """Each member's subscribed topic ids that exist (a subscription to an unknown id is ignored)."""
    return {
        member_id: frozenset(topic_id for topic_id in spec.subscribed_topic_ids if topic_id in topics)
        for member_id, spec in members.items()
    }


def topic_order(topic_ids: Iterable[uuid.UUID], topics: Mapping[uuid.UUID, TopicSpec]) -> list[uuid.UUID]:
    """Topics by name, then id: a stable order so that equal inputs give equal outputs."""
    return sorted(topic_ids, key=lambda topic_id: (topics[topic_id].name, topic_id.bytes))


class Racks:
    """Which partitions have a replica on a member's rack. Inactive (no preference at all) unless
    some member has a rack and some partition lists racks."""

    __slots__ = ("active", "member_racks", "topics")

    def __init__(self, members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec]) -> None:
        self.topics = topics
        self.member_racks = {member_id: spec.rack_id for member_id, spec in members.items()}
        has_member_rack = any(rack is not None for rack in self.member_racks.values())
        self.active = has_member_rack and any(spec.partition_racks for spec in topics.values())

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        return self.topics[topic_id].partition_racks.get(partition, frozenset())

    def matches(self, member_id: str, topic_id: uuid.UUID, partition: int) -> bool:
        rack = self.member_racks[member_id]
        return rack is not None and rack in self.partition_racks(topic_id, partition)


class Owners:
    """The owner of every partition of the subscribed topics in the assignment being built."""

    __slots__ = ("by_topic",)

    def __init__(self, topic_ids: Iterable[uuid.UUID], topics: Mapping[uuid.UUID, TopicSpec]) -> None:
        self.by_topic: dict[uuid.UUID, list[str | None]] = {
            topic_id: [None] * topics[topic_id].num_partitions for topic_id in topic_ids
        }

    def claim_current(
        self, member_id: str, spec: MemberSpec, subscribed: frozenset[uuid.UUID]
    ) -> list[TopicPartition]:
        """Claims the partitions of `spec.assigned` the member may keep: of a topic it still
        subscribes to, that still exist, not already claimed by a member before it."""
        kept: list[TopicPartition] = []
        for topic_id, partitions in spec.assigned.items():
            owners = self.by_topic.get(topic_id)
            if owners is None or topic_id not in subscribed:
                continue
            count = len(owners)
            for partition in partitions:
                if 0 <= partition < count and owners[partition] is None:
                    owners[partition] = member_id
                    kept.append((topic_id, partition))
        return kept

    def release(self, released: Iterable[TopicPartition]) -> None:
        for topic_id, partition in released:
            self.by_topic[topic_id][partition] = None

    def unowned(self, ordered_topic_ids: Iterable[uuid.UUID]) -> list[TopicPartition]:
        """The partitions nobody owns, in topic order then partition order."""
        free: list[TopicPartition] = []
        for topic_id in ordered_topic_ids:
            free.extend(
                (topic_id, partition)
                for partition, owner in enumerate(self.by_topic[topic_id])
                if owner is None
            )
        return free

    def result(self, member_ids: Iterable[str]) -> GroupAssignment:
        """The assignment per member; every member present, topics without partitions left out."""
        collected: dict[str, dict[uuid.UUID, list[int]]] = {member_id: {} for member_id in member_ids}
        for topic_id, owners in self.by_topic.items():
            for partition, owner in enumerate(owners):
                if owner is not None:
                    collected[owner].setdefault(topic_id, []).append(partition)
        return {
            member_id: {topic_id: frozenset(partitions) for topic_id, partitions in assignment.items()}
            for member_id, assignment in collected.items()
        }
