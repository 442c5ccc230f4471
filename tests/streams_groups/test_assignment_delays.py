"""Kafka 4.4's two holds on a streams group's target assignment, in virtual time and with its defaults:
the initial rebalance delay (3 s from the first member's join, ended by a timer that assigns every
member that joined meanwhile) and the assignment interval (a new target at most once a second, computed
by the first heartbeat after it). Meanwhile heartbeats carry ASSIGNMENT_DELAYED."""

from __future__ import annotations

from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.broker.coordinator.streams.internal_topics import StatusCode
from kafkito.broker.coordinator.streams.member import StreamsGroupState
from kafkito.broker.coordinator.streams.requests import StreamsHeartbeatResult
from kafkito.broker.coordinator.streams.tasks import TaskSet
from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.harness import CHANGELOG, REPARTITION, App, Harness, converge

INITIAL = "Assignment delayed due to the configured initial rebalance delay."
INTERVAL = "Assignment delayed due to the configured assignment interval."


def _kafka_defaults() -> Harness:
    h = Harness(StreamsConfig())
    h.topics.create("words", 4)
    h.topics.create(REPARTITION, 4)
    h.topics.create(CHANGELOG, 4)
    return h


def _delays(result: StreamsHeartbeatResult) -> list[str]:
    return [s.detail for s in result.status or () if s.code == StatusCode.ASSIGNMENT_DELAYED]


def _tasks(app: App) -> int:
    return sum(len(p) for p in app.owned.active.values())


def test_members_joining_within_the_initial_delay_get_nothing_until_the_timer_assigns_them_all() -> None:
    h = _kafka_defaults()
    a, b = App("a"), App("b")
    first = h.join(a)
    assert first.error is ErrorCode.NONE
    assert (first.member_epoch, _delays(first), first.active_tasks) == (1, [INITIAL], ())
    h.clock.advance(500)
    assert _delays(h.join(b)) == [INITIAL] and b.epoch == 1
    group = h.group()
    assert (group.state, group.group_epoch, group.assignment_epoch) == (StreamsGroupState.ASSIGNING, 3, 1)
    h.clock.advance(2_499)
    assert _delays(h.beat(a)) == [INITIAL] and h.group().assignment_epoch == 1
    h.clock.advance(1)  # 3 s after a's join: the timer computes the target of both, unasked
    group = h.group()
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)
    assert sorted(len(t.active.get("0", ())) for t in group.target.values()) == [2, 2]
    answer = h.beat(a)
    assert answer.status is None and a.epoch == 3 and _tasks(a) == 4


def test_a_new_target_waits_for_the_assignment_interval_then_the_next_heartbeat_computes_it() -> None:
    h = _kafka_defaults()
    a, b, c = App("a"), App("b"), App("c")
    h.join(a)
    h.clock.advance(3_000)  # the initial delay's timer assigns a at t=3000
    converge(h, [a])
    h.clock.advance(1_000)
    joined = h.join(b)  # the interval has passed: b's join is assigned at once
    assert joined.status is None and h.group().assignment_epoch == h.group().group_epoch
    h.clock.advance(10)
    late = h.join(c)
    assert _delays(late) == [INTERVAL]
    assert late.member_epoch == h.group().assignment_epoch < h.group().group_epoch
    assert h.group().state is StreamsGroupState.ASSIGNING and c.owned == TaskSet.empty()
    h.clock.advance(989)
    assert _delays(h.beat(a)) == [INTERVAL]
    h.clock.advance(1)  # a second after b's assignment: the first heartbeat assigns c too
    assert h.beat(a).status is None
    group = h.group()
    assert group.assignment_epoch == group.group_epoch and "c" in group.target
    converge(h, [a, b, c])
    assert sorted(_tasks(x) for x in (a, b, c)) == [2, 3, 3]


def test_the_interval_counts_from_the_stored_assignment_time_across_a_restart() -> None:
    h = _kafka_defaults()
    a, b = App("a"), App("b")
    h.join(a)
    h.clock.advance(3_000)
    converge(h, [a])
    h.clock.advance(1_000)
    h.join(b)
    assigned_at = h.group().assignment_timestamp_ms
    assert assigned_at == h.clock.now_ms()
    h.coordinator = h.restart()
    assert h.group().assignment_timestamp_ms == assigned_at
    h.clock.advance(10)
    assert _delays(h.join(App("c"))) == [INTERVAL]
