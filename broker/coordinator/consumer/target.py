"""The target assignment (Kafka's TargetAssignmentBuilder): run the group's assignor over the
members as they will be, and write what changed as target assignment records."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping

from kafkito.broker.coordinator.consumer.assignors import Assignor, MemberSpec, TopicSpec
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember, PartitionMap
from kafkito.broker.coordinator.consumer.records import (
    ConsumerGroupRecord,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
    to_assignment,
)
from kafkito.broker.coordinator.consumer.subscription import member_topic_ids
from kafkito.broker.coordinator.consumer.topics import TopicsView


def preferred_assignor(
    members: Mapping[str, ConsumerGroupMember], assignors: Mapping[str, Assignor], default: Assignor
) -> Assignor:
    """The assignor most members ask for (ties: the first in name order), else the default."""
    counts: Counter[str] = Counter()
    for member in members.values():
        if member.server_assignor is not None and member.server_assignor in assignors:
            counts[member.server_assignor] += 1
    if not counts:
        return default
    return assignors[max(sorted(counts), key=lambda name: counts[name])]


def compute_target(
    group: ConsumerGroup,
    current: Mapping[str, PartitionMap],
    members: Mapping[str, ConsumerGroupMember],
    resolved: Callable[[str], tuple[str, ...]],
    topics: TopicsView,
    assignor: Assignor,
    epoch: int,
    now_ms: int = 0,
) -> tuple[dict[str, PartitionMap], list[ConsumerGroupRecord]]:
    """The new target of every member of `members` (the group's members as they will be) at
    `epoch`, and its records: one per member whose target changed, then the target epoch (stamped
    `now_ms`, which the assignment interval counts from).
    `current` is each member's target so far (a static member taking over inherits its target)."""
    specs: dict[str, MemberSpec] = {}
    wanted: set[uuid.UUID] = set()
    # Members mostly share their subscription: resolve each distinct one once.
    by_subscription: dict[tuple[tuple[str, ...], str | None], frozenset[uuid.UUID]] = {}
    for member_id, member in members.items():
        key = (member.subscribed_topic_names, member.subscribed_topic_regex)
        ids = by_subscription.get(key)
        if ids is None:
            ids = by_subscription[key] = member_topic_ids(member, resolved, topics)
            wanted |= ids
        specs[member_id] = MemberSpec(ids, member.rack_id, member.instance_id, current.get(member_id, {}))
    topic_specs: dict[uuid.UUID, TopicSpec] = {}
    for topic_id in wanted:
        info = topics.by_id(topic_id)
        if info is not None:
            topic_specs[topic_id] = TopicSpec(topic_id, info.name, info.num_partitions, {})
    computed = assignor.assign(specs, topic_specs)
    target: dict[str, PartitionMap] = {}
    records: list[ConsumerGroupRecord] = []
    known = group.target
    for member_id in members:
        new = computed.get(member_id, {})
        target[member_id] = new
        if new != known.get(member_id) or member_id not in known:
            records.append(
                ConsumerGroupTargetAssignmentMemberRecord(group.group_id, member_id, to_assignment(new))
            )
    records.append(ConsumerGroupTargetAssignmentMetadataRecord(group.group_id, epoch, now_ms))
    return target, records
