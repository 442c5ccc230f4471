"""Pending transactional offsets (Kafka's pendingTransactionalOffsets and openTransactionsByGroup).

A TxnOffsetCommit's offsets wait here, per producer and group, until the producer's COMMIT or ABORT
marker on the group's `__consumer_offsets` partition. A commit materializes each one unless the
committed offset of that partition is more recent in the log (Kafka compares record offsets): a
plain commit written after the transactional one wins. `order` stands for the record offset: it
counts replays, which run in log order, and is kept only where it can matter (for partitions of
groups with open transactions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from kafkito.broker.coordinator.records import TxnOffsetCommitRecord
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition


class PendingOffset(NamedTuple):
    offset: OffsetAndMetadata
    order: int  # when its record was replayed, against other records of the same partition


class Materialized(NamedTuple):
    group_id: str
    partition: TopicPartition
    offset: OffsetAndMetadata


class TransactionalOffsets:
    """Every producer's pending offsets, and which groups have open transactions."""

    __slots__ = ("_committed_order", "_order", "by_producer", "open_by_group")

    def __init__(self) -> None:
        self.by_producer: dict[int, dict[str, dict[TopicPartition, PendingOffset]]] = {}
        self.open_by_group: dict[str, set[int]] = {}
        # The order of the committed offsets written while their group had open transactions.
        self._committed_order: dict[str, dict[TopicPartition, int]] = {}
        self._order = 0

    def _next(self) -> int:
        self._order += 1
        return self._order

    # -- replay ---------------------------------------------------------------------------------

    def add(self, record: TxnOffsetCommitRecord) -> None:
        """A transactional offset commit record was written (or loaded): it is pending."""
        groups = self.by_producer.setdefault(record.producer_id, {})
        groups.setdefault(record.group_id, {})[record.partition] = PendingOffset(record.offset, self._next())
        self.open_by_group.setdefault(record.group_id, set()).add(record.producer_id)

    def committed(self, group_id: str, tp: TopicPartition) -> None:
        """A plain offset commit of a group with open transactions was replayed (called only then)."""
        self._committed_order.setdefault(group_id, {})[tp] = self._next()

    def tombstone(self, group_id: str, tp: TopicPartition) -> None:
        """An offset tombstone also drops that partition's pending offsets in every open transaction."""
        for producer_id in self.open_by_group.get(group_id, ()):
            self.by_producer.get(producer_id, {}).get(group_id, {}).pop(tp, None)
        committed = self._committed_order.get(group_id)
        if committed is not None:
            committed.pop(tp, None)

    def end(self, producer_id: int, commit: bool, on_partition: Callable[[str], bool]) -> list[Materialized]:
        """The marker of `producer_id` for the groups `on_partition` selects: their pending offsets go,
        and on a commit, those more recent than the committed offset are returned to be materialized."""
        groups = self.by_producer.get(producer_id)
        if not groups:
            self.by_producer.pop(producer_id, None)
            return []
        ended = [g for g in groups if on_partition(g)]
        out: list[Materialized] = []
        for group_id in ended:
            pending = groups.pop(group_id)
            if commit:
                out.extend(self._materialize(group_id, pending))
            self._close(group_id, producer_id)
        if not groups:
            del self.by_producer[producer_id]
        return out

    def _materialize(
        self, group_id: str, pending: dict[TopicPartition, PendingOffset]
    ) -> Iterator[Materialized]:
        committed = self._committed_order.setdefault(group_id, {})
        for tp, (offset, order) in pending.items():
            if order > committed.get(tp, 0):
                committed[tp] = order
                yield Materialized(group_id, tp, offset)

    def _close(self, group_id: str, producer_id: int) -> None:
        producers = self.open_by_group.get(group_id)
        if producers is None:
            return
        producers.discard(producer_id)
        if not producers:
            del self.open_by_group[group_id]
            # Every later transactional record replays after any committed offset: no order needed.
            self._committed_order.pop(group_id, None)

    def forget_group(self, group_id: str) -> None:
        """The group's partition moved away: its pending offsets go with it."""
        for producer_id in self.open_by_group.pop(group_id, ()):
            groups = self.by_producer.get(producer_id)
            if groups is not None:
                groups.pop(group_id, None)
                if not groups:
                    del self.by_producer[producer_id]
        self._committed_order.pop(group_id, None)

    # -- queries --------------------------------------------------------------------------------

    def has_pending(self, group_id: str, tp: TopicPartition) -> bool:
        """Kafka's hasPendingTransactionalOffsets."""
        producers = self.open_by_group.get(group_id)
        if not producers:
            return False
        by_producer = self.by_producer
        for producer_id in producers:
            groups = by_producer.get(producer_id)
            if groups is not None and tp in groups.get(group_id, ()):
                return True
        return False

    def pending_partitions(self, group_id: str) -> set[TopicPartition]:
        out: set[TopicPartition] = set()
        for producer_id in self.open_by_group.get(group_id, ()):
            out.update(self.by_producer.get(producer_id, {}).get(group_id, ()))
        return out

    def pending_of(self, group_id: str) -> dict[int, dict[TopicPartition, OffsetAndMetadata]]:
        """The group's pending offsets by producer (for tests and tools)."""
        out: dict[int, dict[TopicPartition, OffsetAndMetadata]] = {}
        for producer_id in self.open_by_group.get(group_id, ()):
            pending = self.by_producer.get(producer_id, {}).get(group_id)
            if pending:
                out[producer_id] = {tp: p.offset for tp, p in pending.items()}
        return out
