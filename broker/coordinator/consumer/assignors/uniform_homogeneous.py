"""The uniform assignor when every member subscribes to the same topics (Kafka's homogeneous builder).

Balance first: with P partitions and N members each member gets P // N or P // N + 1. Stickiness next:
a member keeps as many of its current partitions as its quota allows, and the P % N larger quotas go
to the members that hold the most now, so a join or a leave moves the fewest partitions possible.
Racks last: a member over its quota gives up partitions off its rack first, and the partitions handed
out go to members on a rack holding a replica where one is free. Racks never cost balance or a move.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Mapping, Sequence

from kafkito.broker.coordinator.consumer.assignors.common import Owners, Racks, TopicPartition, topic_order
from kafkito.broker.coordinator.consumer.assignors.spec import GroupAssignment, MemberSpec, TopicSpec


def assign_homogeneous(
    members: Mapping[str, MemberSpec], subscribed: frozenset[uuid.UUID], topics: Mapping[uuid.UUID, TopicSpec]
) -> GroupAssignment:
    member_ids = sorted(members)
    ordered_topics = topic_order(subscribed, topics)
    owners = Owners(ordered_topics, topics)
    racks = Racks(members, topics)
    current = {
        member_id: owners.claim_current(member_id, members[member_id], subscribed) for member_id in member_ids
    }
    total = sum(topics[topic_id].num_partitions for topic_id in ordered_topics)
    quotas = _quotas(member_ids, current, total)
    rank = {topic_id: index for index, topic_id in enumerate(ordered_topics)}
    for member_id in member_ids:
        kept = current[member_id]
        if len(kept) > quotas[member_id]:
            kept.sort(key=lambda tp: (not racks.matches(member_id, *tp), rank[tp[0]], tp[1]))
            owners.release(kept[quotas[member_id] :])
            del kept[quotas[member_id] :]
    needs = [(member_id, quotas[member_id] - len(current[member_id])) for member_id in member_ids]
    _hand_out([need for need in needs if need[1] > 0], owners.unowned(ordered_topics), owners, racks)
    return owners.result(member_ids)


def _quotas(
    member_ids: Sequence[str], current: Mapping[str, list[TopicPartition]], total: int
) -> dict[str, int]:
    """P // N each, and one more for P % N members: those holding the most now (then by member id),
    so that the partitions they already hold above P // N stay where they are."""
    if not member_ids:
        return {}
    minimum, extra = divmod(total, len(member_ids))
    quotas = dict.fromkeys(member_ids, minimum)
    by_holding = sorted(member_ids, key=lambda member_id: -min(len(current[member_id]), minimum + 1))
    for member_id in by_holding[:extra]:
        quotas[member_id] += 1
    return quotas


def _hand_out(needs: list[tuple[str, int]], free: list[TopicPartition], owners: Owners, racks: Racks) -> None:
    """Gives the free partitions to the members below their quota (the needs add up to len(free)):
    first those on a member's rack, then the rest in topic and partition order."""
    taken = [False] * len(free)
    remaining = dict(needs)
    if racks.active:
        _hand_out_on_rack(remaining, free, taken, owners, racks)
    cursor = 0
    for member_id, _ in needs:
        for _ in range(remaining[member_id]):
            while taken[cursor]:
                cursor += 1
            taken[cursor] = True
            _give(owners, member_id, free[cursor])


def _hand_out_on_rack(
    remaining: dict[str, int], free: list[TopicPartition], taken: list[bool], owners: Owners, racks: Racks
) -> None:
    """The first pass: each member below its quota takes free partitions with a replica on its rack,
    those on the fewest racks first (a partition on several racks is left for whoever else can use it)."""
    on_rack: dict[str, list[tuple[int, int]]] = {}
    for index, (topic_id, partition) in enumerate(free):
        replica_racks = racks.partition_racks(topic_id, partition)
        for rack in replica_racks:
            on_rack.setdefault(rack, []).append((len(replica_racks), index))
    by_rack = {rack: deque(index for _, index in sorted(entries)) for rack, entries in on_rack.items()}
    for member_id in remaining:
        member_rack = racks.member_racks[member_id]
        queue = by_rack.get(member_rack) if member_rack is not None else None
        while queue and remaining[member_id]:
            index = queue.popleft()
            if not taken[index]:
                taken[index] = True
                _give(owners, member_id, free[index])
                remaining[member_id] -= 1


def _give(owners: Owners, member_id: str, tp: TopicPartition) -> None:
    owners.by_topic[tp[0]][tp[1]] = member_id
