"""The uniform assignor when members subscribe to different topics (Kafka's heterogeneous builder).

1. Each member keeps its current partitions of the topics it still subscribes to.
2. The partitions nobody holds are handed out topic by topic (most partitions per subscriber first,
   then fewest subscribers), each to the subscriber holding the fewest partitions in all, preferring
   one on a rack with a replica among the equally loaded.
3. Balancing: for each topic, a partition moves from its most loaded holder to the least loaded
   subscriber while their totals differ by two or more; the passes over the topics repeat until one
   moves nothing. The result has no single move that would narrow a gap between two members, and
   re-running on its own output changes nothing (each move strictly lowers the sum of squared totals,
   so the loop ends).
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.consumer.assignors.common import Owners, Racks, topic_order
from kafkito.broker.coordinator.consumer.assignors.spec import GroupAssignment, MemberSpec, TopicSpec

if TYPE_CHECKING:
    from fractions import Fraction


class _Builder:
    __slots__ = ("counts", "owners", "racks", "subscribers", "topics")

    def __init__(
        self,
        members: Mapping[str, MemberSpec],
        subscriptions: Mapping[str, frozenset[uuid.UUID]],
        topics: Mapping[uuid.UUID, TopicSpec],
    ) -> None:
        member_ids = sorted(members)
        self.topics = topics
        self.subscribers: dict[uuid.UUID, list[str]] = {}
        for member_id in member_ids:
            for topic_id in subscriptions[member_id]:
                self.subscribers.setdefault(topic_id, []).append(member_id)
        self.owners = Owners(self.subscribers, topics)
        self.racks = Racks(members, topics)
        self.counts = {
            member_id: len(self.owners.claim_current(member_id, members[member_id], subscriptions[member_id]))
            for member_id in member_ids
        }

    def hand_out_order(self) -> list[uuid.UUID]:
        from fractions import Fraction  # here: with decimal, ~1 ms of every start otherwise

        def key(topic_id: uuid.UUID) -> tuple[Fraction, int]:
            subscriber_count = len(self.subscribers[topic_id])
            return (-Fraction(self.topics[topic_id].num_partitions, subscriber_count), subscriber_count)

        return sorted(topic_order(self.subscribers, self.topics), key=key)

    def hand_out(self, topic_id: uuid.UUID) -> None:
        owners = self.owners.by_topic[topic_id]
        free = [partition for partition, owner in enumerate(owners) if owner is None]
        if not free:
            return
        least = _LeastLoaded(self, self.subscribers[topic_id])
        for partition in free:
            member_id = least.pick(self.rack_choice(topic_id, partition))
            owners[partition] = member_id
            self.counts[member_id] += 1
            least.update(member_id)

    def rack_choice(self, topic_id: uuid.UUID, partition: int) -> frozenset[str] | None:
        """The racks to prefer for a partition's new holder (None: no rack preference at all)."""
        return self.racks.partition_racks(topic_id, partition) if self.racks.active else None

    def held(self, topic_id: uuid.UUID) -> dict[str, list[int]]:
        """Each holder's partitions of a topic, in the order it gives them up from the end: the
        highest first, and with racks, those off its rack before those on it."""
        held: dict[str, list[int]] = {}
        for partition, owner in enumerate(self.owners.by_topic[topic_id]):
            if owner is not None:
                held.setdefault(owner, []).append(partition)
        if self.racks.active:
            for member_id, partitions in held.items():
                on_rack = [p for p in partitions if self.racks.matches(member_id, topic_id, p)]
                off_rack = [p for p in partitions if not self.racks.matches(member_id, topic_id, p)]
                held[member_id] = on_rack + off_rack
        return held

    def balance(self, topic_id: uuid.UUID) -> int:
        """Moves partitions of one topic from its most to its least loaded subscribers; returns the
        number moved."""
        subscribers = self.subscribers[topic_id]
        owners = self.owners.by_topic[topic_id]
        held = self.held(topic_id)
        counts = self.counts
        if not held or max(counts[m] for m in held) - min(counts[m] for m in subscribers) < 2:
            return 0
        least = _LeastLoaded(self, subscribers)
        rank = least.rank
        givers = [(-counts[m], -rank[m], m) for m in held]
        heapq.heapify(givers)
        moved = 0
        while givers:
            negative_count, _, giver = givers[0]
            if -negative_count != counts[giver] or not held[giver]:
                heapq.heappop(givers)
                continue
            partition = held[giver][-1]
            receiver = least.pick(self.rack_choice(topic_id, partition))
            if counts[giver] - counts[receiver] < 2:
                break
            held[giver].pop()
            held.setdefault(receiver, []).append(partition)
            owners[partition] = receiver
            counts[giver] -= 1
            counts[receiver] += 1
            heapq.heapreplace(givers, (-counts[giver], -rank[giver], giver))
            heapq.heappush(givers, (-counts[receiver], -rank[receiver], receiver))
            least.update(receiver)
            least.update(giver)
            moved += 1
        return moved


class _LeastLoaded:
    """The subscribers of one topic by total partition count, with one heap per rack so that, among
    the least loaded, one on a partition's rack can be picked. Ties go by rank: the order of the
    subscribers by count when the topic's turn began, then by member id (as Kafka's balancer fills
    its least loaded range), so a member that started lower is served first at every level. Entries
    go stale when a count changes and are dropped when they reach the top."""

    __slots__ = ("builder", "by_rack", "heap", "rank")

    def __init__(self, builder: _Builder, subscribers: list[str]) -> None:
        self.builder = builder
        counts = builder.counts
        # `subscribers` is in member-id order and sorted() is stable: by count, then member id.
        self.rank = {m: position for position, m in enumerate(sorted(subscribers, key=counts.__getitem__))}
        self.heap = [(counts[m], self.rank[m], m) for m in subscribers]
        heapq.heapify(self.heap)
        self.by_rack: dict[str, list[tuple[int, int, str]]] = {}
        if builder.racks.active:
            for entry in self.heap:
                rack = builder.racks.member_racks[entry[2]]
                if rack is not None:
                    self.by_rack.setdefault(rack, []).append(entry)
            for heap in self.by_rack.values():
                heapq.heapify(heap)

    def _top(self, heap: list[tuple[int, int, str]]) -> tuple[int, int, str] | None:
        counts = self.builder.counts
        while heap and heap[0][0] != counts[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def pick(self, partition_racks: frozenset[str] | None) -> str:
        best = self._top(self.heap)
        assert best is not None, "a topic in the assignment has subscribers"
        for rack in sorted(partition_racks or ()):
            heap = self.by_rack.get(rack)
            candidate = self._top(heap) if heap else None
            if candidate is not None and candidate[0] == best[0]:
                return candidate[2]
        return best[2]

    def update(self, member_id: str) -> None:
        entry = (self.builder.counts[member_id], self.rank[member_id], member_id)
        heapq.heappush(self.heap, entry)
        rack = self.builder.racks.member_racks[member_id]
        if rack is not None and self.by_rack:
            heapq.heappush(self.by_rack.setdefault(rack, []), entry)


def assign_heterogeneous(
    members: Mapping[str, MemberSpec],
    subscriptions: Mapping[str, frozenset[uuid.UUID]],
    topics: Mapping[uuid.UUID, TopicSpec],
) -> GroupAssignment:
    builder = _Builder(members, subscriptions, topics)
    order = builder.hand_out_order()
    for topic_id in order:
        builder.hand_out(topic_id)
    shared = [topic_id for topic_id in order if len(builder.subscribers[topic_id]) > 1]
    moved = bool(shared)
    while moved:
        moved = False
        for topic_id in shared:
            if builder.balance(topic_id):
                moved = True
    return builder.owners.result(sorted(members))
