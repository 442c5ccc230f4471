"""Where group metadata and offsets are persisted: the `GroupStore` protocol and an in-memory store."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Protocol

from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.group import Group
    from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

StoreCallback = Callable[[ErrorCode], None]


class GroupStore(Protocol):
    """Persistence hooks the coordinator calls, as Kafka's GroupMetadataManager appends to its log.

    Callbacks receive the *append* error (NONE on success); the coordinator maps it to what the
    client sees. They may be called synchronously or later, from the event loop.
    """

    def is_loading(self, group_id: str) -> bool:
        """True while the partition holding this group is being loaded."""
        ...

    def is_any_loading(self) -> bool:
        """True while any partition is being loaded (ListGroups reports it)."""
        ...

    def store_group(self, group: Group, assignment: Mapping[str, bytes], callback: StoreCallback) -> None:
        """Write the group record (on the move to Stable or Empty, and on static replacement)."""
        ...

    def store_offsets(
        self, group: Group, offsets: Mapping[TopicPartition, OffsetAndMetadata], callback: StoreCallback
    ) -> None:
        """Write offset commit records for one group in one append."""
        ...

    def write_tombstones(
        self, group: Group, partitions: Collection[TopicPartition], group_tombstone: bool
    ) -> None:
        """Delete offsets (and the group record) without waiting, as Kafka does with acks=0."""
        ...


class InMemoryGroupStore:
    """Keeps nothing beyond the coordinator's own cache; answers every write at once.

    `defer_writes` parks callbacks until `complete_writes()` runs them, and `fail_with` makes
    appends fail: both let tests see commits in flight and store failures.
    """

    def __init__(self, *, defer_writes: bool = False) -> None:
        self.loading_groups: set[str] = set()
        self.defer_writes = defer_writes
        self.fail_with: ErrorCode = ErrorCode.NONE
        self.group_writes = 0
        self.offset_writes = 0
        self.tombstones: list[tuple[str, tuple[TopicPartition, ...], bool]] = []
        self._deferred: list[tuple[StoreCallback, ErrorCode]] = []

    def is_loading(self, group_id: str) -> bool:
        return group_id in self.loading_groups

    def is_any_loading(self) -> bool:
        return bool(self.loading_groups)

    def store_group(self, group: Group, assignment: Mapping[str, bytes], callback: StoreCallback) -> None:
        self.group_writes += 1
        self._answer(callback)

    def store_offsets(
        self, group: Group, offsets: Mapping[TopicPartition, OffsetAndMetadata], callback: StoreCallback
    ) -> None:
        self.offset_writes += 1
        self._answer(callback)

    def write_tombstones(
        self, group: Group, partitions: Collection[TopicPartition], group_tombstone: bool
    ) -> None:
        self.tombstones.append((group.group_id, tuple(partitions), group_tombstone))

    @property
    def writes_in_flight(self) -> int:
        return len(self._deferred)

    def complete_writes(self) -> None:
        """Answer every parked write, in order."""
        deferred, self._deferred = self._deferred, []
        for callback, error in deferred:
            callback(error)

    def _answer(self, callback: StoreCallback) -> None:
        if self.defer_writes:
            self._deferred.append((callback, self.fail_with))
        else:
            callback(self.fail_with)
