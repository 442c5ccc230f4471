"""The seam with the share partitions (S-DATA's `broker/share/persister.py`): what the share group
coordinator asks of the share-state persister. The broker attaches one to the coordinator
(`GroupCoordinator.share_persister`); without one, share groups still assign partitions but
initialize no share-partition state and the offset APIs answer for no partition."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol


class StateSummary(NamedTuple):
    """What Kafka's ReadShareGroupStateSummary answers of a share partition's persisted state."""

    start_offset: int
    delivery_complete: int  # offsets at or past the start whose delivery is complete (-1: unknown)


class SharePersister(Protocol):
    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        """The partition is assigned in the group for the first time: its share-partition start offset."""
        ...

    def summaries(
        self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]]
    ) -> dict[tuple[uuid.UUID, int], StateSummary | None]:
        """Each partition's persisted start offset and delivery-complete count; None for one never
        initialized."""
        ...

    def alter(self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]) -> None:
        """Reset the start offsets (AlterShareGroupOffsets, on an empty group)."""
        ...

    def delete(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None) -> None:
        """Forget the partitions' state (None: every partition of the group)."""
        ...
