"""Drives a GroupCoordinator's KIP-848 consumer groups in virtual time: heartbeats, topics, restarts."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator, InMemoryRecordSink
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

SESSION_MS = 45_000
REBALANCE_MS = 30_000
Owned = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]


def heartbeat_request(
    group_id: str,
    member_id: str,
    epoch: int,
    *,
    topics: Iterable[str] | None = None,
    regex: str | None = None,
    owned: Owned | None = None,
    instance_id: str | None = None,
    assignor: str | None = None,
    rebalance_timeout_ms: int | None = None,
) -> ConsumerHeartbeatRequest:
    joining = epoch == 0
    return ConsumerHeartbeatRequest(
        group_id=group_id,
        member_id=member_id,
        member_epoch=epoch,
        instance_id=instance_id,
        rack_id=None,
        rebalance_timeout_ms=(
            rebalance_timeout_ms if rebalance_timeout_ms is not None else (REBALANCE_MS if joining else -1)
        ),
        subscribed_topic_names=tuple(topics) if topics is not None else None,
        subscribed_topic_regex=regex,
        server_assignor=assignor,
        owned_partitions=owned if owned is not None else (() if joining else None),
        client_id="client",
        client_host="/127.0.0.1",
        api_version=1,
    )


@dataclass
class Member:
    """What a well-behaved client remembers: its epoch and the partitions it owns."""

    member_id: str
    topics: tuple[str, ...] = ()
    regex: str | None = None
    instance_id: str | None = None
    epoch: int = 0
    owned: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    fenced: bool = False

    def owned_wire(self) -> Owned:
        return tuple((t, tuple(sorted(p))) for t, p in sorted(self.owned.items(), key=lambda i: i[0].bytes))


class Harness:
    """A coordinator on a ManualClock with an in-memory sink and topics."""

    def __init__(
        self, config: CoordinatorConfig | None = None, topics: InMemoryTopics | None = None, start_ms: int = 0
    ) -> None:
        self.config = config or CoordinatorConfig()
        self.clock = ManualClock(start_ms)  # a broker's clock tells epoch milliseconds
        self.timer = Timer(self.clock)
        self.sink = InMemoryRecordSink()
        self.topics = topics or InMemoryTopics()
        self.coordinator = GroupCoordinator(
            self.config, self.clock, self.timer, self.sink, topics=self.topics
        )

    def heartbeat(self, request: ConsumerHeartbeatRequest) -> ConsumerHeartbeatResult:
        replies: list[ConsumerHeartbeatResult] = []
        self.coordinator.consumer_group_heartbeat(request, replies.append)
        assert len(replies) == 1, f"expected one answer, got {replies}"
        return replies[0]

    def join(self, group_id: str, member: Member) -> ConsumerHeartbeatResult:
        request = heartbeat_request(
            group_id,
            member.member_id,
            0,
            topics=member.topics if member.regex is None else (),
            regex=member.regex,
            owned=(),
            instance_id=member.instance_id,
        )
        return self._apply(member, self.heartbeat(request))

    def beat(self, group_id: str, member: Member, *, release_all: bool = True) -> ConsumerHeartbeatResult:
        """One heartbeat reporting what the member owns; with `release_all` the member gives up at once
        what it was told to revoke (its next heartbeat reports it)."""
        owned = member.owned_wire()
        request = heartbeat_request(
            group_id, member.member_id, member.epoch, owned=owned, instance_id=member.instance_id
        )
        return self._apply(member, self.heartbeat(request), release_all)

    def _apply(
        self, member: Member, result: ConsumerHeartbeatResult, release_all: bool = True
    ) -> ConsumerHeartbeatResult:
        if result.error is ErrorCode.FENCED_MEMBER_EPOCH or result.error is ErrorCode.UNKNOWN_MEMBER_ID:
            member.fenced = True
            member.owned = {}
            member.epoch = 0
            return result
        if result.error is not ErrorCode.NONE:
            return result
        member.epoch = result.member_epoch
        if result.assignment is not None and release_all:
            member.owned = {t: frozenset(p) for t, p in result.assignment}
        elif result.assignment is not None:
            new = {t: frozenset(p) for t, p in result.assignment}
            # Keep what it still owns (it did not revoke yet) and nothing new.
            member.owned = {t: p | member.owned.get(t, frozenset()) for t, p in new.items()}
        return result

    def group(self, group_id: str) -> ConsumerGroup:
        group = self.coordinator.get_consumer_group(group_id)
        assert group is not None
        return group

    def restart(self) -> GroupCoordinator:
        """A fresh coordinator replaying everything written so far (what a broker restart does)."""
        fresh = GroupCoordinator(
            self.config, self.clock, Timer(self.clock), InMemoryRecordSink(), topics=self.topics
        )
        for record in self.sink.records:
            fresh.replay(record)
        return fresh


def assignment_of(group: ConsumerGroup) -> Mapping[str, Mapping[uuid.UUID, frozenset[int]]]:
    return {mid: m.assigned for mid, m in group.members.items()}


def converge(harness: Harness, group_id: str, members: Iterable[Member], rounds: int = 10) -> None:
    """Heartbeat every member (each giving up at once what it must revoke) until the group is Stable."""
    members = list(members)
    for _ in range(rounds):
        for member in members:
            harness.beat(group_id, member)
        if harness.group(group_id).state.value == "Stable":
            return
    raise AssertionError(f"group {group_id} did not converge: {harness.group(group_id)}")


class Owns(Protocol):
    @property
    def owned(self) -> Mapping[uuid.UUID, frozenset[int]]: ...


def owned_by_two(members: Iterable[Owns]) -> set[tuple[uuid.UUID, int]]:
    """Partitions two members believe they own at the same time (must always be empty)."""
    seen: set[tuple[uuid.UUID, int]] = set()
    twice: set[tuple[uuid.UUID, int]] = set()
    for member in members:
        for topic_id, partitions in member.owned.items():
            for p in partitions:
                (twice if (topic_id, p) in seen else seen).add((topic_id, p))
    return twice


def was_written(harness: Harness, record: object) -> bool:
    """Whether `record` was written, type included (NamedTuple records of different types with the
    same fields compare equal, as tuples)."""
    return any(type(r) is type(record) and r == record for r in harness.sink.records)
