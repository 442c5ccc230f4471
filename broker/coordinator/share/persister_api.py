"""The seam with the share partitions (S-DATA's `broker/share/persister.py`): what the share group
coordinator asks of the share-state persister. The broker attaches one to the coordinator
(`GroupCoordinator.share_persister`); without one, share groups still assign partitions but
initialize no share-partition state and the offset APIs answer for no partition."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Protocol


class SharePersister(Protocol):
    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        """The partition is assigned in the group for the first time: its share-partition start offset."""
        ...

    def start_offsets(
        self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]]
    ) -> dict[tuple[uuid.UUID, int], int | None]:
        """Each partition's share-partition start offset; None for one never initialized."""
        ...

    def alter(self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]) -> None:
        """Reset the start offsets (AlterShareGroupOffsets, on an empty group)."""
        ...

    def delete(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None) -> None:
        """Forget the partitions' state (None: every partition of the group)."""
        ...
