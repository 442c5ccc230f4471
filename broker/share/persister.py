"""The share-state persister the share group coordinator calls (S-GRP's `SharePersister`): initialize
a partition's state when a group first gets it, read start offsets and delivery-complete counts
(DescribeShareGroupOffsets, as Kafka's ReadShareGroupStateSummary), reset
them (AlterShareGroupOffsets) and forget them (DeleteShareGroupOffsets, DeleteGroups), each written to
`__share_group_state` at once, as Kafka's share coordinator does for these requests."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from kafkito.broker.coordinator.share.persister_api import StateSummary
from kafkito.broker.share.manager import ShareManager
from kafkito.broker.share.state_codec import ShareStateKey


class BrokerSharePersister:
    """`SharePersister` over the broker's ShareManager."""

    __slots__ = ("_manager",)

    def __init__(self, manager: ShareManager) -> None:
        self._manager = manager

    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        self._manager.initialize(group_id, topic_id, partition, start_offset)

    def summaries(
        self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]]
    ) -> dict[tuple[uuid.UUID, int], StateSummary | None]:
        """The persisted start offsets and delivery-complete counts (None: no state), as Kafka's share
        coordinator reads them: a share partition's own start offset may be ahead until its next write."""
        states = self._manager.state.states
        out: dict[tuple[uuid.UUID, int], StateSummary | None] = {}
        for topic_id, partition in partitions:
            state = states.get(ShareStateKey(group_id, topic_id, partition))
            out[topic_id, partition] = (
                None if state is None else StateSummary(state.start_offset, state.delivery_complete)
            )
        return out

    def alter(self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]) -> None:
        for (topic_id, partition), offset in offsets.items():
            self._manager.initialize(group_id, topic_id, partition, offset)

    def delete(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None) -> None:
        manager = self._manager
        if partitions is None:
            keys = {k for k in manager.partitions if k[0] == group_id}
            stored = manager.state.states
            keys |= {(k.group_id, k.topic_id, k.partition) for k in stored if k.group_id == group_id}
            partitions = [(t, p) for _, t, p in keys]
        for topic_id, partition in list(partitions):
            manager.delete(group_id, topic_id, partition)
