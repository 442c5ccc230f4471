"""Drives a GroupCoordinator's share groups in virtual time: heartbeats, topics, restarts."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator, InMemoryRecordSink
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics
from kafkito.broker.coordinator.share.config import ShareConfig
from kafkito.broker.coordinator.share.persister_api import StateSummary
from kafkito.broker.coordinator.share.requests import ShareHeartbeatRequest, ShareHeartbeatResult
from kafkito.purgatory import ManualClock, Timer


def request(
    group_id: str, member_id: str, epoch: int, topics: Iterable[str] | None = None, rack_id: str | None = None
) -> ShareHeartbeatRequest:
    return ShareHeartbeatRequest(
        group_id,
        member_id,
        epoch,
        rack_id,
        tuple(topics) if topics is not None else None,
        "client",
        "/127.0.0.1",
    )


class MemoryPersister:
    """The share-state persister's interface over dicts (S-DATA's real one lives in broker/share)."""

    def __init__(self) -> None:
        self.offsets: dict[tuple[str, uuid.UUID, int], int] = {}

    def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int) -> None:
        self.offsets[(group_id, topic_id, partition)] = start_offset

    def summaries(
        self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]]
    ) -> dict[tuple[uuid.UUID, int], StateSummary | None]:
        out: dict[tuple[uuid.UUID, int], StateSummary | None] = {}
        for t, p in partitions:
            start = self.offsets.get((group_id, t, p))
            out[t, p] = None if start is None else StateSummary(start, 0)
        return out

    def alter(self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]) -> None:
        for (t, p), offset in offsets.items():
            self.offsets[(group_id, t, p)] = offset

    def delete(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None) -> None:
        wanted = None if partitions is None else set(partitions)
        for key in [k for k in self.offsets if k[0] == group_id]:
            if wanted is None or (key[1], key[2]) in wanted:
                del self.offsets[key]


class Harness:
    """A coordinator on a ManualClock with an in-memory sink, topics and persister."""

    def __init__(self, share_config: ShareConfig | None = None, topics: InMemoryTopics | None = None) -> None:
        self.clock = ManualClock()
        self.timer = Timer(self.clock)
        self.sink = InMemoryRecordSink()
        self.topics = topics or InMemoryTopics()
        self.share_config = share_config
        self.persister = MemoryPersister()
        self.coordinator = self._build()

    def _build(self) -> GroupCoordinator:
        coordinator = GroupCoordinator(
            CoordinatorConfig(),
            self.clock,
            self.timer,
            self.sink,
            topics=self.topics,
            share_config=self.share_config,
        )
        coordinator.share_persister = self.persister
        coordinator.share_log_offsets = lambda _t, _p: (0, 10)
        return coordinator

    def heartbeat(self, req: ShareHeartbeatRequest) -> ShareHeartbeatResult:
        replies: list[ShareHeartbeatResult] = []
        self.coordinator.share_group_heartbeat(req, replies.append)
        assert len(replies) == 1, replies
        return replies[0]

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)

    def restart(self) -> GroupCoordinator:
        """A new coordinator replaying every record written so far (the log)."""
        old = self.coordinator
        for group in old.share_groups():
            old.unload_group(group.group_id)  # the old coordinator's timers end with it
        records = list(self.sink.records)
        self.timer = Timer(self.clock)
        self.coordinator = self._build()
        for record in records:
            self.coordinator.replay(record)
        self.coordinator.on_loaded({r.group_id for r in records if hasattr(r, "group_id")})
        return self.coordinator
