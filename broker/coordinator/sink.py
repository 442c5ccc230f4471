"""Where the coordinator's records go: the `RecordSink` protocol, and an in-memory sink for tests.

The broker's sink is the `__consumer_offsets` log (`broker.group_log.log_sink.LogRecordSink`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from kafkito.broker.coordinator.records import (
    AppendCallback,
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
)
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.protocol.errors import ErrorCode

R = TypeVar("R")


class RecordSink(Protocol):
    """Appends a group's records to its partition, as Kafka's runtime appends a CoordinatorResult.

    `done` receives the *append* error (NONE on success); the coordinator maps it to what the client
    sees. It may be called synchronously or later, from the event loop.
    """

    def is_loading(self, group_id: str) -> bool:
        """True while the partition holding this group is being loaded."""
        ...

    def is_any_loading(self) -> bool:
        """True while any partition is being loaded (ListGroups reports it)."""
        ...

    def is_partition_loading(self, partition: int) -> bool:
        """True while that `__consumer_offsets` partition is being loaded."""
        ...

    def append(self, group_id: str, records: Sequence[CoordinatorRecord], done: AppendCallback) -> None:
        """Write `records` (all of one group) in one append, then call `done` with the outcome.

        Transactional offset commits (all of one producer) go as that producer's transactional batch.
        """
        ...

    def partition_for(self, group_id: str) -> int:
        """The `__consumer_offsets` partition holding the group."""
        ...

    def append_marker(self, marker: TransactionMarker, done: AppendCallback) -> None:
        """Write the COMMIT or ABORT control batch to the marker's partition, then call `done`."""
        ...


class InMemoryAppends(Generic[R]):
    """Appends kept in a list (the in-memory sinks of the group and transaction coordinators).

    Every write is answered at once; `defer_writes` parks the answers until `complete_writes()` runs
    them, and `fail_with` makes appends fail: both let tests see writes in flight and append failures.
    `records` is every record appended successfully, in order: what a log would hold (a restart
    replays it).
    """

    def __init__(self, *, defer_writes: bool = False) -> None:
        self.defer_writes = defer_writes
        self.fail_with: ErrorCode = ErrorCode.NONE
        self.records: list[R] = []
        self._deferred: list[tuple[Callable[[ErrorCode], None], ErrorCode]] = []

    def _answer(self, records: Sequence[R], done: Callable[[ErrorCode], None]) -> None:
        error = self.fail_with
        if error is ErrorCode.NONE:
            self.records.extend(records)
        if self.defer_writes:
            self._deferred.append((done, error))
        else:
            done(error)

    @property
    def pending_writes(self) -> int:
        return len(self._deferred)

    def complete_writes(self) -> None:
        """Answer every parked write, in order."""
        deferred, self._deferred = self._deferred, []
        for done, error in deferred:
            done(error)


class InMemoryRecordSink(InMemoryAppends[CoordinatorRecord]):
    """The group coordinator's records in memory (see `InMemoryAppends`), counted by kind."""

    def __init__(
        self, *, defer_writes: bool = False, partitioner: Callable[[str], int] = lambda _group_id: 0
    ) -> None:
        super().__init__(defer_writes=defer_writes)
        self.partitioner = partitioner
        self.loading_groups: set[str] = set()
        self.group_writes = 0
        self.offset_writes = 0
        self.markers = 0
        self.tombstones: list[tuple[str, tuple[TopicPartition, ...], bool]] = []

    def is_loading(self, group_id: str) -> bool:
        return group_id in self.loading_groups

    def is_any_loading(self) -> bool:
        return bool(self.loading_groups)

    def is_partition_loading(self, partition: int) -> bool:
        return any(self.partitioner(g) == partition for g in self.loading_groups)

    def append(self, group_id: str, records: Sequence[CoordinatorRecord], done: AppendCallback) -> None:
        if any(isinstance(r, (OffsetTombstone, GroupTombstone)) for r in records):
            partitions = tuple(r.partition for r in records if isinstance(r, OffsetTombstone))
            group_tombstone = any(isinstance(r, GroupTombstone) for r in records)
            self.tombstones.append((group_id, partitions, group_tombstone))
        elif any(isinstance(r, GroupMetadataRecord) for r in records):
            self.group_writes += 1
        elif any(isinstance(r, OffsetCommitRecord) for r in records):
            self.offset_writes += 1
        self._answer(records, done)

    def partition_for(self, group_id: str) -> int:
        return self.partitioner(group_id)

    def append_marker(self, marker: TransactionMarker, done: AppendCallback) -> None:
        self.markers += 1
        self._answer([marker], done)
