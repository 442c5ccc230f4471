"""The share partitions built on first use: a broker no share group uses never imports them.

`SharePersisterOnFirstUse` is what the share group coordinator holds from start: its first call builds
the ShareManager (as a share request would through `ctx.share`). Imports nothing of the share package.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkito.broker.coordinator.share.persister_api import StateSummary
    from kafkito.broker.share.manager import ShareManager


class SharePersisterOnFirstUse:
    """`SharePersister` whose every call goes to the broker's ShareManager, built by the first."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[], ShareManager]) -> None:
        self._build = build

    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        self._build().initialize(group_id, topic_id, partition, start_offset)

    def summaries(
        self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]]
    ) -> dict[tuple[uuid.UUID, int], StateSummary | None]:
        from kafkito.broker.share.persister import BrokerSharePersister

        return BrokerSharePersister(self._build()).summaries(group_id, partitions)

    def alter(self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]) -> None:
        from kafkito.broker.share.persister import BrokerSharePersister

        BrokerSharePersister(self._build()).alter(group_id, offsets)

    def delete(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None) -> None:
        from kafkito.broker.share.persister import BrokerSharePersister

        BrokerSharePersister(self._build()).delete(group_id, partitions)

    def log_offsets(self, topic_id: uuid.UUID, partition: int) -> tuple[int, int]:
        """(log start, log end) of a partition, for share.auto.offset.reset."""
        return self._build().log_offsets(topic_id, partition)
