"""The coordinator's KIP-848 and KIP-932 parts, each built on first use.

A broker with no consumer group never imports `consumer/` (~25 modules, ~5 ms of every start), nor one
with no share group `share/`. A part is built by the first request, record or GROUP config of its
group type; what the broker sets before that (topic changes, the share persister and log offsets) is
kept here and handed to the part when it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.runtime import Runtime

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.group import ClassicGroup
    from kafkito.broker.coordinator.consumer.assignors import Assignor
    from kafkito.broker.coordinator.consumer.classic_members import ClassicMembers
    from kafkito.broker.coordinator.consumer.groups import ConsumerGroups
    from kafkito.broker.coordinator.consumer.heartbeat import Heartbeats
    from kafkito.broker.coordinator.share.config import ShareConfig
    from kafkito.broker.coordinator.share.groups import LogOffsets, ShareGroups
    from kafkito.broker.coordinator.share.offsets import ShareOffsets
    from kafkito.broker.coordinator.share.persister_api import SharePersister
    from kafkito.broker.coordinator.streams.config import StreamsConfig
    from kafkito.broker.coordinator.streams.groups import StreamsGroups
    from kafkito.broker.coordinator.streams.heartbeat import Heartbeats as StreamsHeartbeats


class GroupTypeParts:
    """`consumer`, `heartbeats` and `classic_members` (KIP-848); `share` and `share_offsets` (KIP-932);
    `streams` and `streams_heartbeats` (KIP-1071)."""

    def __init__(
        self,
        rt: Runtime,
        assignors: Mapping[str, Assignor] | None,
        share_config: ShareConfig | Callable[[], ShareConfig] | None,
        on_downgraded: Callable[[str], None],
        on_upgraded: Callable[[ClassicGroup], None],
    ) -> None:
        self._rt = rt
        self._assignors = assignors
        self._share_config = share_config
        self._on_downgraded = on_downgraded
        self._on_upgraded = on_upgraded
        self.topics_changes = 0  # counted until the consumer part exists (its topics version)
        self._share_persister: SharePersister | None = None
        self._share_log_offsets: LogOffsets | None = None
        self.streams_config: StreamsConfig | None = None

    @cached_property
    def consumer(self) -> ConsumerGroups:
        from kafkito.broker.coordinator.consumer.groups import ConsumerGroups

        consumer = ConsumerGroups(self._rt, self._assignors)
        consumer.topics_version = self.topics_changes
        consumer.on_downgraded = self._on_downgraded
        consumer.on_upgraded = self._on_upgraded
        return consumer

    @cached_property
    def heartbeats(self) -> Heartbeats:
        from kafkito.broker.coordinator.consumer.heartbeat import Heartbeats

        return Heartbeats(self._rt, self.consumer)

    @cached_property
    def classic_members(self) -> ClassicMembers:
        from kafkito.broker.coordinator.consumer.classic_members import ClassicMembers

        return ClassicMembers(self._rt, self.consumer)

    @property
    def has_consumer(self) -> bool:
        return "consumer" in self.__dict__

    @cached_property
    def share(self) -> ShareGroups:
        from kafkito.broker.coordinator.share.groups import ShareGroups

        config = self._share_config
        share = ShareGroups(self._rt, config() if callable(config) else config)
        share.persister = self._share_persister
        if self._share_log_offsets is not None:
            share.log_offsets = self._share_log_offsets
        return share

    @cached_property
    def share_offsets(self) -> ShareOffsets:
        from kafkito.broker.coordinator.share.offsets import ShareOffsets

        return ShareOffsets(self._rt, self.share)

    @property
    def has_share(self) -> bool:
        return "share" in self.__dict__

    @cached_property
    def streams(self) -> StreamsGroups:
        from kafkito.broker.coordinator.streams.groups import StreamsGroups

        return StreamsGroups(self._rt, self.streams_config)

    @cached_property
    def streams_heartbeats(self) -> StreamsHeartbeats:
        from kafkito.broker.coordinator.streams.heartbeat import Heartbeats

        return Heartbeats(self.streams)

    @property
    def has_streams(self) -> bool:
        return "streams" in self.__dict__

    def set_share_persister(self, persister: SharePersister | None) -> None:
        self._share_persister = persister
        if self.has_share:
            self.share.persister = persister

    def set_share_log_offsets(self, offsets: LogOffsets) -> None:
        self._share_log_offsets = offsets
        if self.has_share:
            self.share.log_offsets = offsets

    def on_topics_changed(self) -> None:
        if self.has_consumer:
            self.consumer.on_topics_changed()
        else:
            self.topics_changes += 1
        if self.has_share:
            self.share.on_topics_changed()
