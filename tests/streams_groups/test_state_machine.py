"""Random joins, leaves, crashes, slow revocations, static leaves and topology changes against a
streams group in virtual time, checking after every step: no active task is run by two live
members, epochs never go back, and a coordinator rebuilt from the records equals the live one."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.broker.coordinator.streams.group import StreamsGroup
from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.harness import APP, SESSION_MS, App, Harness, active_owned_twice, word_count

NAMES = ["a", "b", "c", "d"]
PROCESSES = ["p1", "p2", "p3"]


def snapshot(group: StreamsGroup) -> tuple[object, ...]:
    return (
        group.group_epoch,
        group.assignment_epoch,
        group.validated_topology_epoch,
        group.topology,
        group.members,
        group.target,
        group.active_owners,
        {t: set(m) for t, m in group.replica_holders.items() if m},
        group.static_members,
    )


class StreamsGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(
            StreamsConfig(num_standby_replicas=1, initial_rebalance_delay_ms=0, assignment_interval_ms=0)
        )
        self.h.topics.create("words", 4)
        self.topology = word_count(1)
        self.live: dict[str, App] = {}
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.member_epochs: dict[str, int] = {}
        self.incarnation = 0

    def _fresh_id(self, name: str) -> str:
        self.incarnation += 1
        return f"{name}-{self.incarnation}"

    @rule(name=st.sampled_from(NAMES), process=st.sampled_from(PROCESSES), static=st.booleans())
    def join(self, name: str, process: str, static: bool) -> None:
        if any(app.member_id.startswith(f"{name}-") for app in self.live.values()):
            return
        app = App(
            self._fresh_id(name),
            process_id=process,
            instance_id=name if static else None,
            topology=self.topology,
        )
        result = self.h.join(app)
        if result.error is ErrorCode.NONE:
            self.live[app.member_id] = app
        else:
            assert result.error is ErrorCode.UNRELEASED_INSTANCE_ID

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data(), release=st.booleans())
    def beat(self, data: st.DataObject, release: bool) -> None:
        app = self.live[data.draw(st.sampled_from(sorted(self.live)))]
        result = self.h.beat(app, release=release)
        if app.fenced:
            del self.live[app.member_id]
        else:
            assert result.error is ErrorCode.NONE, result

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data(), static=st.booleans())
    def leave(self, data: st.DataObject, static: bool) -> None:
        app = self.live.pop(data.draw(st.sampled_from(sorted(self.live))))
        if static and app.instance_id is None:
            static = False
        assert self.h.leave(app, static=static).error is ErrorCode.NONE

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    def crash(self, data: st.DataObject) -> None:
        """The member stops heartbeating: it is dead, whatever it believed it owned."""
        del self.live[data.draw(st.sampled_from(sorted(self.live)))]

    @rule()
    def time_passes(self) -> None:
        """5 s pass; every live member heartbeats (each gives up what it must), the dead are fenced."""
        self.h.clock.advance(5_000)
        for app in list(self.live.values()):
            self.h.beat(app)
            if app.fenced:
                del self.live[app.member_id]

    @rule()
    def long_silence(self) -> None:
        """Nobody heartbeats for a whole session: everyone is fenced."""
        self.h.clock.advance(SESSION_MS)
        for app in list(self.live.values()):
            assert self.h.beat(app).error is ErrorCode.UNKNOWN_MEMBER_ID
        self.live.clear()

    @rule(partitions=st.integers(min_value=1, max_value=6))
    def topology_change(self, partitions: int) -> None:
        """A new version of the application reads another topic with epoch + 1: Kafka 4.4 refuses
        topology updates, whatever the group's members."""
        epoch = self.topology.epoch + 1
        source = f"words{epoch}"
        if self.h.topics.by_name(source) is None:
            self.h.topics.create(source, partitions)
        app = App(self._fresh_id("v"), process_id="p1", topology=word_count(epoch, source))
        existed = self.h.coordinator.get_streams_group(APP) is not None
        result = self.h.join(app)
        if not existed:
            assert result.error is ErrorCode.NONE  # a new group takes it
            self.topology = app.topology
            self.live[app.member_id] = app
        else:
            assert result.error is ErrorCode.INVALID_REQUEST

    @invariant()
    def no_active_task_run_twice(self) -> None:
        assert not active_owned_twice(self.live.values())

    @invariant()
    def epochs_never_go_back(self) -> None:
        group = self.h.coordinator.get_streams_group(APP)
        if group is None:
            return
        assert group.group_epoch >= self.group_epoch
        assert group.assignment_epoch >= self.assignment_epoch
        assert group.assignment_epoch <= group.group_epoch
        self.group_epoch, self.assignment_epoch = group.group_epoch, group.assignment_epoch
        for member_id, member in group.members.items():
            if member.member_epoch >= 0:
                assert member.member_epoch >= self.member_epochs.get(member_id, 0)
                self.member_epochs[member_id] = member.member_epoch

    @invariant()
    def a_restart_rebuilds_the_same_group(self) -> None:
        live = self.h.coordinator.get_streams_group(APP)
        rebuilt = self.h.restart().get_streams_group(APP)
        if live is None:
            assert rebuilt is None
            return
        assert rebuilt is not None
        assert snapshot(rebuilt) == snapshot(live)


StreamsGroupMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_streams_group_machine = StreamsGroupMachine.TestCase
