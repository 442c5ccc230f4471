"""Random classic and consumer-protocol clients sharing one group id, which converts between the
classic and the consumer group type as they come and go (group.consumer.migration.policy
bidirectional), in virtual time. After every step: one group type per id, one owner per partition
among the group's members, the group epoch (or generation) never goes back, and a consumer group
with members always has a consumer-protocol member (else it went back to classic). Once everyone
heartbeats long enough, the group is Stable and every subscribed partition is owned exactly once."""

from __future__ import annotations

import os
import uuid

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkito.broker.coordinator import (
    JoinGroupRequest,
    JoinGroupResult,
    LeavingMember,
    SyncGroupRequest,
    SyncGroupResult,
)
from kafkito.broker.coordinator.consumer.classic_protocol import decode_subscription, encode_assignment
from kafkito.broker.coordinator.results import JoinGroupMember
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import SESSION_MS, Harness, Member, heartbeat_request, owned_by_two
from tests.consumer_groups.test_classic_members import decode_assignment
from tests.coordinator.harness import subscription

GROUP = "g"
TOPICS = {"t0": 3, "t1": 2}
CLASSIC = ["x", "y"]
CONSUMERS = ["a", "b"]


class ClassicClient:
    """An eager classic client driven step by step: a parked JoinGroup or SyncGroup waits."""

    def __init__(self, h: Harness, topics: tuple[str, ...]) -> None:
        self.h = h
        self.topics = topics
        self.member_id = ""
        self.generation = -1
        self.owned: dict[uuid.UUID, frozenset[int]] = {}
        self.joining: list[JoinGroupResult] | None = None
        self.syncing: list[SyncGroupResult] | None = None

    def step(self) -> None:
        for _ in range(4):  # follow the answers that come at once
            if not self._advance():
                return

    def _advance(self) -> bool:
        """One transition; False when waiting (parked, or nothing to do)."""
        if self.joining is not None:
            return bool(self.joining) and self._joined(self.joining[0])
        if self.syncing is not None:
            return bool(self.syncing) and self._synced(self.syncing[0])
        if not self.member_id:
            self._join()
            return True
        error = self.h.coordinator.heartbeat(GROUP, self.member_id, None, self.generation)
        if error is ErrorCode.NONE:
            return False
        if error is ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id = ""
        self._join()
        return True

    def _join(self) -> None:
        self.owned = {}  # eager: everything is given up before joining
        self.joining = []
        request = JoinGroupRequest(
            GROUP, self.member_id, None, "classic", "/h", 30_000, SESSION_MS, "consumer",
            (("range", subscription(*self.topics)),), api_version=5,
        )  # fmt: skip
        self.h.coordinator.join_group(request, self.joining.append)

    def _joined(self, result: JoinGroupResult) -> bool:
        self.joining = None
        if result.error is ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = result.member_id
            self._join()
            return True
        if result.error is not ErrorCode.NONE:
            if result.error is ErrorCode.UNKNOWN_MEMBER_ID:
                self.member_id = ""
            self._join()
            return True
        self.member_id, self.generation = result.member_id, result.generation_id
        plan = self._assign(result.members) if result.leader_id == self.member_id else {}
        self.syncing = []
        sync = SyncGroupRequest(
            GROUP, self.generation, self.member_id, None, "consumer", result.protocol_name, plan
        )
        self.h.coordinator.sync_group(sync, self.syncing.append)
        return True

    def _synced(self, result: SyncGroupResult) -> bool:
        self.syncing = None
        if result.error is not ErrorCode.NONE:
            self._join()
            return True
        for name, parts in decode_assignment(result.assignment).items():
            info = self.h.topics.by_name(name)
            assert info is not None
            self.owned[info.topic_id] = frozenset(parts)
        return False

    def _assign(self, members: tuple[JoinGroupMember, ...]) -> dict[str, bytes]:
        """The leader's assignment: each topic's partitions round-robin over its subscribers."""
        plan: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in members}
        for topic in sorted(TOPICS):
            info = self.h.topics.by_name(topic)
            subscribers = sorted(
                m.member_id
                for m in members
                if topic in ((decode_subscription(m.metadata) or (None, None, None))[0] or ())
            )
            if info is None or not subscribers:
                continue
            for p in range(info.num_partitions):
                plan[subscribers[p % len(subscribers)]].setdefault(topic, []).append(p)
        return {m: encode_assignment({t: tuple(ps) for t, ps in a.items()}) for m, a in plan.items()}


class MigrationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness()
        for name, partitions in TOPICS.items():
            self.h.topics.create(name, partitions)
        self.classic: dict[str, ClassicClient] = {}
        self.consumers: dict[str, Member] = {}
        self.joins = 0
        self.epoch = 0

    # -- rules ----------------------------------------------------------------------------------

    @rule(
        name=st.sampled_from(CLASSIC),
        topics=st.lists(st.sampled_from(sorted(TOPICS)), min_size=1, unique=True),
    )
    def classic_join(self, name: str, topics: list[str]) -> None:
        if name not in self.classic:
            client = self.classic[name] = ClassicClient(self.h, tuple(topics))
            client.step()

    @rule(name=st.sampled_from(CLASSIC))
    def classic_step(self, name: str) -> None:
        if name in self.classic:
            self.classic[name].step()

    @rule(name=st.sampled_from(CLASSIC), crash=st.booleans())
    def classic_leave(self, name: str, crash: bool) -> None:
        client = self.classic.pop(name, None)
        if client is not None and not crash and client.member_id:
            self.h.coordinator.leave_group(GROUP, [LeavingMember(client.member_id)])

    @rule(
        name=st.sampled_from(CONSUMERS),
        topics=st.lists(st.sampled_from(sorted(TOPICS)), min_size=1, unique=True),
    )
    def consumer_join(self, name: str, topics: list[str]) -> None:
        if name in self.consumers:
            return
        self.joins += 1
        member = Member(f"{name}-{self.joins}", tuple(topics))
        result = self.h.join(GROUP, member)
        assert result.error is ErrorCode.NONE, result
        self.consumers[name] = member

    @rule(name=st.sampled_from(CONSUMERS))
    def consumer_beat(self, name: str) -> None:
        member = self.consumers.get(name)
        if member is not None:
            self.h.beat(GROUP, member)
            if member.fenced:
                del self.consumers[name]

    @rule(name=st.sampled_from(CONSUMERS), crash=st.booleans())
    def consumer_leave(self, name: str, crash: bool) -> None:
        member = self.consumers.pop(name, None)
        if member is not None and not crash:
            self.h.heartbeat(heartbeat_request(GROUP, member.member_id, -1))

    @rule(ms=st.integers(1, 20_000))
    def advance(self, ms: int) -> None:
        self.h.clock.advance(ms)
        self.consumers = {n: m for n, m in self.consumers.items() if self._known(m.member_id)}

    @rule()
    def settle(self) -> None:
        """Everyone heartbeats past the session timeout (the crashed are removed), then until the
        group is Stable: every subscribed partition is owned by exactly one member."""
        for _ in range(SESSION_MS // 3000 + 12):
            self.h.clock.advance(3000)
            self._everyone_steps()
        for _ in range(10):
            self._everyone_steps()
        self.consumers = {n: m for n, m in self.consumers.items() if not m.fenced}
        consumer = self.h.coordinator.get_consumer_group(GROUP)
        classic = self.h.coordinator.get_group(GROUP)
        if consumer is not None and consumer.members:
            assert consumer.state.value == "Stable", consumer
        elif classic is not None and classic.size:
            assert classic.state.value == "Stable", classic
        else:
            return
        wanted: set[tuple[uuid.UUID, int]] = set()
        subscribers: list[ClassicClient | Member] = [*self.classic.values(), *self.consumers.values()]
        for client in subscribers:
            for topic in client.topics:
                info = self.h.topics.by_name(topic)
                assert info is not None
                wanted.update((info.topic_id, p) for p in range(info.num_partitions))
        owned = [(t, p) for c in self._clients() for t, ps in c.owned.items() for p in ps]
        assert sorted(owned, key=str) == sorted(wanted, key=str)

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def one_type_per_group_id(self) -> None:
        consumer = self.h.coordinator.get_consumer_group(GROUP)
        classic = self.h.coordinator.get_group(GROUP)
        assert consumer is None or classic is None
        if consumer is not None and consumer.members:
            assert any(m.classic_member is None for m in consumer.members.values()), consumer

    @invariant()
    def one_owner_per_partition(self) -> None:
        consumer = self.h.coordinator.get_consumer_group(GROUP)
        if consumer is not None:
            seen: set[tuple[uuid.UUID, int]] = set()
            for member in consumer.members.values():
                owned = member.owned_partitions()
                assert not owned & seen
                seen |= owned
        assert not owned_by_two(self._clients())

    @invariant()
    def the_epoch_never_goes_back(self) -> None:
        """Across conversions too; only an empty group starts over (it is replaced, not converted)."""
        consumer = self.h.coordinator.get_consumer_group(GROUP)
        classic = self.h.coordinator.get_group(GROUP)
        epoch = consumer.group_epoch if consumer is not None else classic.generation_id if classic else None
        if epoch is not None:
            assert epoch >= self.epoch
            self.epoch = epoch
        members = consumer.members if consumer is not None else classic.member_ids() if classic else ()
        if not members:
            self.epoch = 0  # an empty group may be replaced by a new one of the other type (as in Kafka)

    # -- helpers --------------------------------------------------------------------------------

    def _everyone_steps(self) -> None:
        for client in self.classic.values():
            client.step()
        for member in self.consumers.values():
            self.h.beat(GROUP, member)

    def _known(self, member_id: str) -> bool:
        consumer = self.h.coordinator.get_consumer_group(GROUP)
        if consumer is not None:
            return member_id in consumer.members
        classic = self.h.coordinator.get_group(GROUP)
        return classic is not None and classic.has(member_id)

    def _clients(self) -> list[ClassicClient | Member]:
        clients: list[ClassicClient | Member] = [c for c in self.classic.values() if self._known(c.member_id)]
        return clients + [m for m in self.consumers.values() if self._known(m.member_id)]


MigrationMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("KAFKITO_MIGRATION_EXAMPLES", "60")),
    stateful_step_count=int(os.environ.get("KAFKITO_MIGRATION_STEPS", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestMigrationMachine = MigrationMachine.TestCase
