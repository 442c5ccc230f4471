"""Random joins, leaves, crashes, subscription changes, topic changes and restarts against KIP-848
consumer groups in virtual time, checking Kafka's invariants after every step: a partition never has
two owners, epochs never go back, a coordinator rebuilt from the records equals the live one, and
once everyone heartbeats every subscribed partition is assigned."""

from __future__ import annotations

import dataclasses
import os
import uuid

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupCoordinator,
    InMemoryRecordSink,
    JoinGroupRequest,
    JoinGroupResult,
    LeavingMember,
    SyncGroupRequest,
    SyncGroupResult,
)
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Timer
from tests.consumer_groups.harness import SESSION_MS, Harness, Member, heartbeat_request, owned_by_two
from tests.consumer_groups.test_classic_members import decode_assignment
from tests.coordinator.harness import subscription

GROUP = "g"
TOPICS = ["t0", "t1", "t2"]
NAMES = ["a", "b", "c", "d"]
CLASSIC_NAMES = ["x", "y"]
SUBSCRIPTIONS = st.one_of(
    st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True).map(lambda ts: (tuple(ts), None)),
    st.just(((), "t[01]")),
)


def snapshot(group: ConsumerGroup) -> tuple[object, ...]:
    """Everything the records decide about a group (for rebuilt == live)."""
    return (
        group.state,
        group.group_epoch,
        group.assignment_epoch,
        group.metadata_hash,
        group.members,
        group.target,
        group.owners,
        group.static_members,
        dict(group.subscribed_names),
        dict(group.regex_counts),
        {r: (v.topics, v.version) for r, v in group.regexes.items()},
    )


class ClassicClient:
    """An eager classic `consumer`-protocol client inside the consumer group."""

    def __init__(self, h: Harness, topics: tuple[str, ...]) -> None:
        self.h = h
        self.topics = topics
        self.member_id = ""
        self.generation = -1
        self.owned: dict[uuid.UUID, frozenset[int]] = {}

    def rebalance(self) -> ErrorCode:
        """JoinGroup (giving up everything first, as an eager client) then SyncGroup."""
        self.owned = {}
        joined: list[JoinGroupResult] = []
        request = JoinGroupRequest(
            GROUP, self.member_id, None, "classic", "/h", 30_000, SESSION_MS, "consumer",
            (("range", subscription(*self.topics)),), api_version=5,
        )  # fmt: skip
        self.h.coordinator.join_group(request, joined.append)
        if joined[0].error is ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = joined[0].member_id
            return self.rebalance()
        if joined[0].error is not ErrorCode.NONE:
            return joined[0].error
        self.member_id, self.generation = joined[0].member_id, joined[0].generation_id
        synced: list[SyncGroupResult] = []
        sync = SyncGroupRequest(GROUP, self.generation, self.member_id, None, "consumer", "range", {})
        self.h.coordinator.sync_group(sync, synced.append)
        if synced[0].error is ErrorCode.NONE:
            for name, parts in decode_assignment(synced[0].assignment).items():
                info = self.h.topics.by_name(name)
                assert info is not None
                self.owned[info.topic_id] = frozenset(parts)
        return synced[0].error

    def beat(self) -> ErrorCode:
        error = self.h.coordinator.heartbeat(GROUP, self.member_id, None, self.generation)
        if error in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION):
            return self.rebalance()
        return error


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        # Classic members stay classic members of the consumer group (no downgrade): the downgrade
        # and the classic protocol's own rebalances are tested elsewhere.
        self.h = Harness(
            config=dataclasses.replace(CoordinatorConfig(), group_consumer_migration_policy="upgrade")
        )
        self.classic: dict[str, ClassicClient] = {}
        self.live: dict[str, Member] = {}  # heartbeating clients, by name
        self.crashed: list[Member] = []
        self.generation = 0  # suffix of member ids: a name that rejoins is a new member
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.member_epochs: dict[str, int] = {}

    # -- rules ----------------------------------------------------------------------------------

    @rule(name=st.sampled_from(NAMES), subscription=SUBSCRIPTIONS)
    def join(self, name: str, subscription: tuple[tuple[str, ...], str | None]) -> None:
        if name in self.live:
            return
        self.generation += 1
        member = Member(f"{name}-{self.generation}", subscription[0], regex=subscription[1])
        result = self.h.join(GROUP, member)
        assert result.error.name == "NONE", result
        self.live[name] = member

    @rule(name=st.sampled_from(NAMES), release=st.booleans())
    def beat(self, name: str, release: bool) -> None:
        member = self.live.get(name)
        if member is None:
            return
        self.h.beat(GROUP, member, release_all=release)
        if member.fenced:
            del self.live[name]

    @rule(name=st.sampled_from(NAMES))
    def leave(self, name: str) -> None:
        member = self.live.pop(name, None)
        if member is not None:
            result = self.h.heartbeat(heartbeat_request(GROUP, member.member_id, -1))
            assert result.error.name in ("NONE", "UNKNOWN_MEMBER_ID"), result

    @rule(name=st.sampled_from(NAMES))
    def crash(self, name: str) -> None:
        member = self.live.pop(name, None)
        if member is not None:
            self.crashed.append(member)

    @rule(name=st.sampled_from(NAMES), subscription=SUBSCRIPTIONS)
    def resubscribe(self, name: str, subscription: tuple[tuple[str, ...], str | None]) -> None:
        member = self.live.get(name)
        if member is None:
            return
        request = heartbeat_request(
            GROUP,
            member.member_id,
            member.epoch,
            topics=subscription[0],
            regex=subscription[1] or "",
            owned=member.owned_wire(),
        )
        self.h._apply(member, self.h.heartbeat(request))
        if member.fenced:
            del self.live[name]

    @rule(
        name=st.sampled_from(CLASSIC_NAMES), topics=st.lists(st.sampled_from(TOPICS), min_size=1, unique=True)
    )
    def classic_join(self, name: str, topics: list[str]) -> None:
        group = self.h.coordinator.get_consumer_group(GROUP)
        if name in self.classic or group is None or not group.members:
            return
        client = ClassicClient(self.h, tuple(topics))
        assert client.rebalance() is ErrorCode.NONE
        self.classic[name] = client

    @rule(name=st.sampled_from(CLASSIC_NAMES))
    def classic_beat(self, name: str) -> None:
        client = self.classic.get(name)
        if client is not None and client.beat() is ErrorCode.UNKNOWN_MEMBER_ID:
            del self.classic[name]

    @rule(name=st.sampled_from(CLASSIC_NAMES), crash=st.booleans())
    def classic_leave(self, name: str, crash: bool) -> None:
        client = self.classic.pop(name, None)
        if client is not None and not crash:
            self.h.coordinator.leave_group(GROUP, [LeavingMember(client.member_id)])

    @rule(topic=st.sampled_from(TOPICS), partitions=st.integers(1, 4))
    def create_or_grow_topic(self, topic: str, partitions: int) -> None:
        info = self.h.topics.by_name(topic)
        if info is None:
            self.h.topics.create(topic, partitions)
        elif partitions > info.num_partitions:
            self.h.topics.grow(topic, partitions)
        else:
            return
        self.h.coordinator.on_topics_changed()

    @rule(ms=st.integers(1, 20_000))
    def advance(self, ms: int) -> None:
        self.h.clock.advance(ms)
        for name, member in list(self.live.items()):
            if not self._known(member):
                del self.live[name]  # fenced by a timeout meanwhile: a zombie now
        for name, client in list(self.classic.items()):
            if not self._known(client):
                del self.classic[name]

    @rule()
    def restart(self) -> None:
        """A broker restart: a fresh coordinator replays the records; it must equal the live one."""
        h = self.h
        fresh = h.restart()
        live, rebuilt = h.coordinator.get_consumer_group(GROUP), fresh.get_consumer_group(GROUP)
        assert (live is None) == (rebuilt is None)
        if live is not None and rebuilt is not None:
            assert snapshot(rebuilt) == snapshot(live)
            assert rebuilt.offsets == live.offsets
        # Go on with the rebuilt coordinator (its sink holds the same log).
        sink = InMemoryRecordSink()
        sink.records = list(h.sink.records)
        h.timer = Timer(h.clock)
        h.sink = sink
        h.coordinator = GroupCoordinator(h.config, h.clock, h.timer, sink, topics=h.topics)
        for record in sink.records:
            h.coordinator.replay(record)
        h.coordinator.on_loaded([GROUP])

    @precondition(lambda self: bool(self.live))
    @rule()
    def settle(self) -> None:
        """Everyone alive heartbeats (revoking at once) past the session timeout, so crashed members
        are fenced: then the group is Stable and every subscribed partition is assigned."""
        for _ in range(SESSION_MS // 5000 + 2):
            self.h.clock.advance(5000)
            self._everyone_beats()
        for _ in range(8):
            self._everyone_beats()
        self.live = {n: m for n, m in self.live.items() if not m.fenced}
        self.classic = {n: c for n, c in self.classic.items() if self._known(c)}
        self.crashed.clear()
        group = self.h.coordinator.get_consumer_group(GROUP)
        assert group is not None
        if not self.live:
            return
        assert group.state.value == "Stable", group
        wanted = self._subscribed_partitions(group)
        assigned = {(t, p) for m in group.members.values() for t, ps in m.assigned.items() for p in ps}
        assert assigned == wanted

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def one_owner_per_partition(self) -> None:
        group = self.h.coordinator.get_consumer_group(GROUP)
        if group is None:
            return
        seen: set[tuple[uuid.UUID, int]] = set()
        for member in group.members.values():
            owned = member.owned_partitions()
            assert not (owned & seen), f"two owners of {owned & seen}"
            seen |= owned
        clients: list[Member | ClassicClient] = [m for m in self.live.values() if self._known(m)]
        clients += [c for c in self.classic.values() if self._known(c)]
        assert not owned_by_two(clients)

    @invariant()
    def epochs_never_go_back(self) -> None:
        group = self.h.coordinator.get_consumer_group(GROUP)
        if group is None:
            return
        assert group.group_epoch >= self.group_epoch
        assert group.assignment_epoch >= self.assignment_epoch
        assert group.assignment_epoch <= group.group_epoch
        self.group_epoch, self.assignment_epoch = group.group_epoch, group.assignment_epoch
        for member_id, member in group.members.items():
            assert member.member_epoch >= self.member_epochs.get(member_id, 0)
            assert member.member_epoch <= group.assignment_epoch
            self.member_epochs[member_id] = member.member_epoch

    # -- helpers --------------------------------------------------------------------------------

    def _everyone_beats(self) -> None:
        for member in self.live.values():
            self.h.beat(GROUP, member)
        for client in self.classic.values():
            client.beat()

    def _known(self, member: Member | ClassicClient) -> bool:
        group = self.h.coordinator.get_consumer_group(GROUP)
        return group is not None and member.member_id in group.members

    def _subscribed_partitions(self, group: ConsumerGroup) -> set[tuple[uuid.UUID, int]]:
        names: set[str] = set()
        for member in group.members.values():
            if member.member_epoch < 0:
                continue
            names.update(member.subscribed_topic_names)
            if member.subscribed_topic_regex:
                names.update(t for t in TOPICS if t in ("t0", "t1"))
        wanted: set[tuple[uuid.UUID, int]] = set()
        for name in names:
            info = self.h.topics.by_name(name)
            if info is not None:
                wanted.update((info.topic_id, p) for p in range(info.num_partitions))
        return wanted


ConsumerGroupMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("KAFKITO_CONSUMER_GROUP_EXAMPLES", "100")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConsumerGroupMachine = ConsumerGroupMachine.TestCase
