"""Drives a GroupCoordinator in virtual time: reply recorders, request shorthands, group set-up."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupCoordinator,
    GroupState,
    InMemoryRecordSink,
    JoinGroupRequest,
    JoinGroupResult,
    LeaveGroupResult,
    LeavingMember,
    OffsetAndMetadata,
    OffsetCommitRequest,
    SyncGroupRequest,
    SyncGroupResult,
    TopicPartition,
    TxnOffsetCommitRequest,
)
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

T = TypeVar("T")

SESSION_MS = 10_000
REBALANCE_MS = 30_000


def subscription(*topics: str, user_data: bytes | None = None) -> bytes:
    """A `consumer` protocol subscription (v0) for `topics`."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        raw = topic.encode()
        out += struct.pack(">h", len(raw)) + raw
    out += struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data)) + user_data
    return out


DEFAULT_PROTOCOLS: tuple[tuple[str, bytes], ...] = (("range", subscription("t")),)


class DoubleReply(AssertionError):
    """A callback was called a second time."""


class Reply(Generic[T]):
    """Records what a callback received; a second call is a failure of the coordinator."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.results: list[T] = []

    def __call__(self, result: T) -> None:
        if self.results:
            raise DoubleReply(f"{self.what} answered twice: {self.results[0]!r} then {result!r}")
        self.results.append(result)

    def __repr__(self) -> str:
        return f"Reply({self.what}, {self.results!r})"

    @property
    def done(self) -> bool:
        return bool(self.results)

    @property
    def result(self) -> T:
        assert self.results, f"{self.what} is still parked"
        return self.results[0]


@dataclass
class Harness:
    """A coordinator on a ManualClock, plus shorthand requests that record every reply."""

    config: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    sink: InMemoryRecordSink = field(default_factory=InMemoryRecordSink)
    start_ms: int = 0  # where the clock starts: a broker's is epoch milliseconds

    def __post_init__(self) -> None:
        self.clock = ManualClock(self.start_ms)
        self.timer = Timer(self.clock)
        self.coordinator = GroupCoordinator(self.config, self.clock, self.timer, self.sink)
        self.replies: list[Reply[JoinGroupResult] | Reply[SyncGroupResult]] = []

    # -- time -------------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)

    def advance_to(self, t_ms: int) -> None:
        assert t_ms >= self.now
        self.clock.advance(t_ms - self.now)

    # -- requests ---------------------------------------------------------------------------------

    def join(
        self,
        group: str = "g",
        member_id: str = "",
        *,
        instance: str | None = None,
        client_id: str = "client",
        session_ms: int = SESSION_MS,
        rebalance_ms: int = REBALANCE_MS,
        protocols: Sequence[tuple[str, bytes]] = DEFAULT_PROTOCOLS,
        protocol_type: str = "consumer",
        version: int = 9,
    ) -> Reply[JoinGroupResult]:
        reply: Reply[JoinGroupResult] = Reply(f"join {member_id or instance or client_id}")
        self.replies.append(reply)
        self.coordinator.join_group(
            JoinGroupRequest(
                group,
                member_id,
                instance,
                client_id,
                "/127.0.0.1",
                rebalance_ms,
                session_ms,
                protocol_type,
                list(protocols),
                api_version=version,
            ),
            reply,
        )
        return reply

    def join_new(self, group: str = "g", **kwargs: object) -> tuple[str, Reply[JoinGroupResult]]:
        """A dynamic v4+ member's two JoinGroups: returns its id and the (maybe parked) second reply."""
        first = self.join(group, **kwargs)  # type: ignore[arg-type]
        assert first.result.error is ErrorCode.MEMBER_ID_REQUIRED, first.result
        member_id = first.result.member_id
        return member_id, self.join(group, member_id, **kwargs)  # type: ignore[arg-type]

    def sync(
        self,
        group: str,
        member_id: str,
        generation: int,
        assignments: Mapping[str, bytes] | None = None,
        *,
        instance: str | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
    ) -> Reply[SyncGroupResult]:
        reply: Reply[SyncGroupResult] = Reply(f"sync {member_id}")
        self.replies.append(reply)
        self.coordinator.sync_group(
            SyncGroupRequest(
                group,
                generation,
                member_id,
                instance,
                protocol_type,
                protocol_name,
                dict(assignments or {}),
            ),
            reply,
        )
        return reply

    def heartbeat(
        self, group: str, member_id: str, generation: int, instance: str | None = None
    ) -> ErrorCode:
        return self.coordinator.heartbeat(group, member_id, instance, generation)

    def leave(self, group: str, *members: LeavingMember) -> LeaveGroupResult:
        return self.coordinator.leave_group(group, list(members))

    def commit(
        self,
        group: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        member_id: str = "",
        generation: int = -1,
        instance: str | None = None,
    ) -> Reply[dict[TopicPartition, ErrorCode]]:
        reply: Reply[dict[TopicPartition, ErrorCode]] = Reply(f"commit {group}")
        full = {
            tp: o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o) for tp, o in offsets.items()
        }
        request = OffsetCommitRequest(group, member_id, instance, generation, full)
        self.coordinator.commit_offsets(request, reply)
        return reply

    def txn_commit(
        self,
        group: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        producer_id: int = 1000,
        producer_epoch: int = 0,
        member_id: str = "",
        generation: int = -1,
        instance: str | None = None,
    ) -> Reply[dict[TopicPartition, ErrorCode]]:
        """TxnOffsetCommit in the transaction of `producer_id`."""
        reply: Reply[dict[TopicPartition, ErrorCode]] = Reply(f"txn commit {group}")
        full = {
            tp: o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o) for tp, o in offsets.items()
        }
        request = TxnOffsetCommitRequest(
            group, f"txn-{producer_id}", producer_id, producer_epoch, member_id, generation, instance, full
        )
        self.coordinator.commit_transactional_offsets(request, reply)
        return reply

    def end_txn(
        self, producer_id: int = 1000, commit: bool = True, *, partition: int = 0, producer_epoch: int = 0
    ) -> Reply[ErrorCode]:
        """The transaction coordinator's marker for `producer_id` on one `__consumer_offsets` partition."""
        reply: Reply[ErrorCode] = Reply(f"end txn {producer_id}")
        self.coordinator.complete_transaction(partition, producer_id, producer_epoch, commit, reply)
        return reply

    # -- set-ups ----------------------------------------------------------------------------------

    def state(self, group: str = "g") -> GroupState | None:
        g = self.coordinator.get_group(group)
        return None if g is None else g.state

    def generation(self, group: str = "g") -> int:
        g = self.coordinator.get_group(group)
        assert g is not None
        return g.generation_id

    def leader(self, group: str = "g") -> str | None:
        g = self.coordinator.get_group(group)
        assert g is not None
        return g.leader_id

    def members(self, group: str = "g") -> set[str]:
        g = self.coordinator.get_group(group)
        return set() if g is None else set(g.member_ids())

    def stable_group(
        self,
        n: int,
        group: str = "g",
        *,
        instances: Sequence[str | None] | None = None,
        assign: bool = True,
        **kwargs: object,
    ) -> list[str]:
        """Form a Stable group of `n` members (joined together, leader first); returns their ids."""
        replies: list[Reply[JoinGroupResult]] = []
        for i in range(n):
            instance = instances[i] if instances is not None else None
            if instance is None:
                _, reply = self.join_new(group, client_id=f"c{i}", **kwargs)
            else:
                reply = self.join(group, instance=instance, client_id=f"c{i}", **kwargs)  # type: ignore[arg-type]
            replies.append(reply)
        self.advance(0)
        for _ in range(100):
            if all(r.done for r in replies):
                break
            self.advance(max(self.config.group_initial_rebalance_delay_ms, 1))
        results = [r.result for r in replies]
        assert all(r.error is ErrorCode.NONE for r in results), results
        ids = [r.member_id for r in results]
        generation = results[0].generation_id
        leader = results[0].leader_id
        syncs = [
            self.sync(
                group, m, generation, {x: x.encode() for x in ids} if (m == leader and assign) else None
            )
            for m in [leader] + [m for m in ids if m != leader]
        ]
        assert all(s.result.error is ErrorCode.NONE for s in syncs), syncs
        assert self.state(group) is GroupState.STABLE
        return [leader] + [m for m in ids if m != leader]

    def unanswered(self) -> list[Reply[JoinGroupResult] | Reply[SyncGroupResult]]:
        return [r for r in self.replies if not r.done]
