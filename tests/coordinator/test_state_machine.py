"""Randomized clients against the coordinator in virtual time, checking its invariants after every step."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkito.broker.coordinator import (
    ClassicGroup,
    CoordinatorConfig,
    GroupCoordinator,
    GroupState,
    InMemoryRecordSink,
    JoinGroupRequest,
    JoinGroupResult,
    LeavingMember,
    OffsetAndMetadata,
    OffsetCommitRequest,
    SyncGroupRequest,
    SyncGroupResult,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

GROUP = "g"
SESSION_MS = 10_000
PROTOCOLS = [
    [("range", b"a"), ("roundrobin", b"a")],
    [("roundrobin", b"b"), ("range", b"b")],
    [("range", b"c")],
]
N_CLIENTS = 5
INSTANCES = [None, None, None, "static-a", "static-b"]


class Recorder:
    """Every callback of the run: counts calls so a double answer is caught even if swallowed."""

    def __init__(self) -> None:
        self.calls: list[list[object]] = []

    def new(self, on_result: object) -> tuple[int, object]:
        index = len(self.calls)
        self.calls.append([])

        def callback(result: object) -> None:
            self.calls[index].append(result)
            on_result(result)  # type: ignore[operator]

        return index, callback


@dataclass
class Client:
    """A consumer-like client: remembers its member id, generation and whether it leads."""

    instance: str | None
    member_id: str = ""
    generation: int = -1
    leader: bool = False
    members_seen: list[str] = field(default_factory=list)
    protocols: int = 0
    join_in_flight: bool = False
    sync_in_flight: bool = False
    needs_join: bool = True
    synced_generation: int = -1


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.timer = Timer(self.clock)
        self.store = InMemoryRecordSink()
        self.coordinator = GroupCoordinator(
            CoordinatorConfig(group_initial_rebalance_delay_ms=1_000, group_max_size=4),
            self.clock,
            self.timer,
            self.store,
        )
        self.recorder = Recorder()
        self.clients = [Client(instance) for instance in INSTANCES]
        self.last_generation = 0
        self.leader_assignments: dict[int, dict[str, bytes]] = {}
        self.problems: list[str] = []

    # -- callbacks --------------------------------------------------------------------------------

    def _on_join(self, client: Client, result: JoinGroupResult) -> None:
        client.join_in_flight = False
        group = self.coordinator.get_group(GROUP)
        client.needs_join = result.error is not ErrorCode.NONE
        if result.error is ErrorCode.MEMBER_ID_REQUIRED:
            client.member_id = result.member_id
        elif result.error is ErrorCode.NONE:
            client.member_id = result.member_id
            client.generation = result.generation_id
            client.leader = result.leader_id == result.member_id
            client.members_seen = [m.member_id for m in result.members]
            if group is None or result.generation_id != group.generation_id:
                self.problems.append(f"join answered with generation {result.generation_id} vs {group}")
            elif result.members and set(client.members_seen) != set(group.member_ids()):
                self.problems.append(f"leader saw {client.members_seen}, group has {group.member_ids()}")
            if result.members and not client.leader:
                self.problems.append("a follower received the member list")
        elif result.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            client.member_id, client.generation, client.leader = "", -1, False

    def _on_sync(self, client: Client, member_id: str, result: SyncGroupResult) -> None:
        client.sync_in_flight = False
        if result.error is not ErrorCode.NONE:
            client.needs_join = True
        if result.error is ErrorCode.NONE:
            client.synced_generation = client.generation
            group = self.coordinator.get_group(GROUP)
            if group is None or not group.has(member_id):
                self.problems.append(f"{member_id} synced but is not a member")
            elif result.assignment != group.get(member_id).assignment:
                self.problems.append(f"{member_id} got {result.assignment!r}, not its assignment")
        elif result.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            client.member_id, client.generation, client.leader = "", -1, False

    # -- client actions ---------------------------------------------------------------------------

    @rule(i=st.integers(0, N_CLIENTS - 1), version=st.sampled_from([3, 5, 9]), change=st.booleans())
    def join(self, i: int, version: int, change: bool) -> None:
        client = self.clients[i]
        if change:
            client.protocols = (client.protocols + 1) % len(PROTOCOLS)
        client.join_in_flight = True
        _, callback = self.recorder.new(lambda r, c=client: self._on_join(c, r))  # type: ignore[misc]
        self.coordinator.join_group(
            JoinGroupRequest(
                GROUP, client.member_id, client.instance if version >= 5 else None, f"client-{i}", "/h",
                20_000, SESSION_MS, "consumer", PROTOCOLS[client.protocols], api_version=version,
            ),
            callback,  # type: ignore[arg-type]
        )  # fmt: skip

    @rule(i=st.integers(0, N_CLIENTS - 1), omit=st.integers(0, 3))
    def sync(self, i: int, omit: int) -> None:
        client = self.clients[i]
        if client.generation < 0:
            return
        assignment: dict[str, bytes] = {}
        if client.leader:
            kept = client.members_seen[omit:] if omit < len(client.members_seen) else []
            assignment = {m: f"{m}@{client.generation}".encode() for m in kept}
            group = self.coordinator.get_group(GROUP)
            if (
                group is not None
                and group.state is GroupState.COMPLETING_REBALANCE
                and group.generation_id == client.generation
                and group.is_leader(client.member_id)
            ):
                self.leader_assignments[client.generation] = {
                    group.get(m).group_instance_id or m: data for m, data in assignment.items()
                }
        client.sync_in_flight = True
        _, callback = self.recorder.new(
            lambda r, c=client, m=client.member_id: self._on_sync(c, m, r)  # type: ignore[misc]
        )
        self.coordinator.sync_group(
            SyncGroupRequest(
                GROUP, client.generation, client.member_id, client.instance, None, None, assignment
            ),
            callback,  # type: ignore[arg-type]
        )

    @rule(i=st.integers(0, N_CLIENTS - 1))
    def heartbeat(self, i: int) -> None:
        client = self.clients[i]
        error = self.coordinator.heartbeat(GROUP, client.member_id, client.instance, client.generation)
        if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            client.member_id, client.generation, client.leader = "", -1, False
        if error is not ErrorCode.NONE:
            client.needs_join = True

    @rule(
        rounds=st.integers(1, 6),
        pause=st.sampled_from([0, 300, 1_000, 3_000]),
        idle=st.sets(st.integers(0, N_CLIENTS - 1), max_size=2),
    )
    def well_behaved_clients(self, rounds: int, pause: int, idle: set[int]) -> None:
        """Clients doing what consumers do (join, sync, heartbeat), except the `idle` ones."""
        for _ in range(rounds):
            for i, client in enumerate(self.clients):
                if i in idle or client.join_in_flight or client.sync_in_flight:
                    continue
                if client.needs_join or not client.member_id or client.generation < 0:
                    self.join(i, 9, False)
                elif client.synced_generation != client.generation:
                    self.sync(i, 0)
                else:
                    self.heartbeat(i)
            self.clock.advance(pause)

    @rule(i=st.integers(0, N_CLIENTS - 1))
    def leave(self, i: int) -> None:
        client = self.clients[i]
        self.coordinator.leave_group(GROUP, [LeavingMember(client.member_id, client.instance)])
        client.member_id, client.generation, client.leader = "", -1, False

    @rule(i=st.integers(3, N_CLIENTS - 1))
    def admin_removes_static_member(self, i: int) -> None:
        self.coordinator.leave_group(GROUP, [LeavingMember("", self.clients[i].instance)])

    @rule(i=st.integers(3, N_CLIENTS - 1))
    def static_member_restarts(self, i: int) -> None:
        client = self.clients[i]
        client.member_id, client.generation, client.leader = "", -1, False

    @rule(i=st.integers(0, N_CLIENTS - 1), offset=st.integers(0, 100))
    def commit(self, i: int, offset: int) -> None:
        client = self.clients[i]
        _, callback = self.recorder.new(lambda r: None)
        self.coordinator.commit_offsets(
            OffsetCommitRequest(
                GROUP, client.member_id, client.instance, client.generation,
                {TopicPartition("t", 0): OffsetAndMetadata(offset)},
            ),
            callback,  # type: ignore[arg-type]
        )  # fmt: skip

    @rule()
    def admin(self) -> None:
        self.coordinator.describe_groups([GROUP])
        self.coordinator.list_groups(states=["stable"])
        if self.coordinator.delete_groups([GROUP]).get(GROUP) is ErrorCode.NONE:
            self.last_generation = 0
            self.leader_assignments.clear()

    @rule(ms=st.sampled_from([0, 1, 500, 999, 1_000, 3_000, 9_999, 10_000, 20_000]))
    def advance(self, ms: int) -> None:
        self.clock.advance(ms)

    # -- invariants -------------------------------------------------------------------------------

    @invariant()
    def no_problem_seen_by_clients(self) -> None:
        assert not self.problems, self.problems

    @invariant()
    def no_callback_called_twice(self) -> None:
        twice = [calls for calls in self.recorder.calls if len(calls) > 1]
        assert not twice, twice

    @invariant()
    def group_is_consistent(self) -> None:
        group = self.coordinator.get_group(GROUP)
        if group is None:
            return
        members = group.members()
        ids = group.member_ids()
        assert group.generation_id >= self.last_generation, "generation went backwards"
        self.last_generation = group.generation_id
        if members:
            assert group.leader_id in ids, "the leader must be a member"
        else:
            assert group.leader_id is None
        assert group.num_awaiting_join == sum(m.is_awaiting_join for m in members)
        for member in members:
            if member.group_instance_id is not None:
                assert group.static_member_id(member.group_instance_id) == member.member_id
        assert len(set(group.static_instance_ids())) == sum(m.is_static for m in members)
        assert group.pending_sync_members() <= set(ids)
        state = group.state
        event(f"state {state.value}, generation>2: {group.generation_id > 2}")
        if state is GroupState.EMPTY:
            assert not members
        if state in (GroupState.PREPARING_REBALANCE, GroupState.STABLE):
            assert not any(m.is_awaiting_sync for m in members)
        if state is GroupState.COMPLETING_REBALANCE:
            assert not any(m.is_awaiting_join for m in members)
        if state is GroupState.STABLE:
            given = self.leader_assignments.get(group.generation_id, {})
            for member in members:
                identity = member.group_instance_id or member.member_id
                assert member.assignment == given.get(identity, b""), member
            assert group.protocol_name is not None

    def teardown(self) -> None:
        # Everyone goes silent: every parked request must still be answered and the group must empty.
        for _ in range(4):
            self.clock.advance(400_000)
        unanswered = [i for i, calls in enumerate(self.recorder.calls) if not calls]
        assert not unanswered, f"{len(unanswered)} requests never answered"
        group = self.coordinator.get_group(GROUP)
        assert group is None or (group.state is GroupState.EMPTY and group.size == 0)
        assert self.coordinator.heartbeat_purgatory.pending == 0
        assert self.coordinator.rebalance_purgatory.pending == 0
        self.check_replay(group)

    def check_replay(self, group: ClassicGroup | None) -> None:
        """The records written, replayed in order into a fresh coordinator, give back the same group.

        An Empty group of generation 0 without offsets holds nothing durable (no group record, no
        offset): on either side it counts as absent (the loader, replaying only live records, never
        builds one; an in-order replay can leave one behind after its offsets' tombstones).
        """
        replayed = GroupCoordinator(self.coordinator.config, self.clock, self.timer)
        for record in self.store.records:
            replayed.replay(record)
        again = replayed.get_group(GROUP)
        if group is None or (group.generation_id == 0 and not group.offsets):
            assert again is None or (again.generation_id == 0 and not again.offsets), again
            return
        assert again is not None
        assert (again.state, again.generation_id, again.protocol_type, again.offsets) == (
            group.state,
            group.generation_id,
            group.protocol_type,
            group.offsets,
        )


CoordinatorMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("KAFKITO_COORDINATOR_EXAMPLES", "150")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCoordinatorMachine = CoordinatorMachine.TestCase
