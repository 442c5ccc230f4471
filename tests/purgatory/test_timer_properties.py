"""Property tests: the timing wheel against a sorted-list model of deadlines, across all wheel levels."""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kafkito.purgatory import DelayedOperation, ManualClock, Timer, TimerTask

# Delays spanning every level of a 1 ms x 20 wheel (20 ms, 400 ms, 8 s, 160 s, 53 min, 17.8 h, ...).
DELAYS = st.one_of(
    st.integers(-3, 25),
    st.integers(0, 450),
    st.integers(0, 9_000),
    st.integers(0, 200_000),
    st.integers(0, 4_000_000),
    st.integers(0, 100_000_000),
)
STEPS = st.one_of(
    st.integers(0, 30), st.integers(0, 1_000), st.integers(0, 300_000), st.integers(0, 50_000_000)
)
WHEELS = st.sampled_from([(1, 20), (1, 2), (1, 3), (2, 5), (7, 4), (10, 20)])


def _fires_at(now: int, delay: int, tick: int) -> int:
    """When a task added at `now` fires under stepped virtual time: its deadline rounded up to the tick."""
    return max(-(-(now + delay) // tick) * tick, now)


@dataclass(eq=False)
class Op(DelayedOperation):
    """A delayed operation logging its callbacks (a dataclass: the timer must not rely on hashing it)."""

    delay: int
    name: str
    clock: ManualClock
    fired: list[tuple[str, int]]
    completes: Counter[str]

    def __post_init__(self) -> None:
        DelayedOperation.__init__(self, self.delay)

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        self.completes[self.name] += 1

    def on_expiration(self) -> None:
        assert self.completes[self.name] == 1, "on_expiration before on_complete"
        self.fired.append((self.name, self.clock.now_ms()))


class WheelAgainstSortedList(RuleBasedStateMachine):
    """Random add/cancel/re-add/complete/advance; the model is a sorted list of (fire time, name)."""

    @initialize(wheel=WHEELS, start=st.integers(0, 10**12))
    def setup(self, wheel: tuple[int, int], start: int) -> None:
        self.tick, size = wheel
        self.clock = ManualClock(start)
        self.timer = Timer(self.clock, tick_ms=self.tick, wheel_size=size)
        self.model: list[tuple[int, str]] = []
        self.fire_time: dict[str, int] = {}
        self.tasks: dict[str, TimerTask] = {}
        self.follow_up: dict[str, int] = {}  # name -> delay of the task its callback schedules
        self.fired: list[tuple[str, int]] = []
        self.completes: Counter[str] = Counter()
        self.count = 0

    def _name(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def _model_add(self, name: str, now: int, delay: int) -> None:
        self.fire_time[name] = at = _fires_at(now, delay, self.tick)
        bisect.insort(self.model, (at, name))

    def _model_remove(self, name: str) -> None:
        self.model.remove((self.fire_time[name], name))

    def _schedule(self, name: str, delay: int) -> None:
        def fire() -> None:
            self.fired.append((name, self.clock.now_ms()))
            if name in self.follow_up:
                self._schedule(name + "+", self.follow_up[name])

        self.tasks[name] = self.timer.schedule(delay, fire)

    @rule(delay=DELAYS)
    def add(self, delay: int) -> None:
        name = self._name()
        self._schedule(name, delay)
        self._model_add(name, self.clock.now_ms(), delay)

    @rule(delay=DELAYS, follow_up=st.integers(-1, 500))
    def add_one_that_schedules_another_when_it_fires(self, delay: int, follow_up: int) -> None:
        name = self._name()
        self.follow_up[name] = follow_up
        self._schedule(name, delay)
        self._model_add(name, self.clock.now_ms(), delay)

    @rule(delay=DELAYS)
    def add_operation(self, delay: int) -> None:
        name = self._name()
        op = Op(delay, name, self.clock, self.fired, self.completes)
        self.tasks[name] = op
        self.timer.add(op)
        self._model_add(name, self.clock.now_ms(), delay)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        _, name = data.draw(st.sampled_from(self.model))
        self.tasks[name].cancel()
        self._model_remove(name)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), delay=DELAYS)
    def re_add_a_pending_task(self, data: st.DataObject, delay: int) -> None:
        _, name = data.draw(st.sampled_from(self.model))
        task = self.tasks[name]
        if isinstance(task, Op):
            return
        task.delay_ms = delay
        self.timer.add(task)
        self._model_remove(name)
        self._model_add(name, self.clock.now_ms(), delay)

    @precondition(lambda self: any(isinstance(self.tasks[n], Op) for _, n in self.model))
    @rule(data=st.data())
    def complete_operation(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from([n for _, n in self.model if isinstance(self.tasks[n], Op)]))
        op = self.tasks[name]
        assert isinstance(op, Op)
        assert op.force_complete() is True
        assert op.force_complete() is False
        self._model_remove(name)

    @rule(ms=STEPS)
    def advance(self, ms: int) -> None:
        target = self.clock.now_ms() + ms
        expected: list[tuple[str, int]] = []
        while self.model and self.model[0][0] <= target:
            at, name = self.model.pop(0)
            expected.append((name, at))
            if name in self.follow_up:
                self.tasks[name + "+"] = self.tasks[name]  # placeholder until the real one exists
                self._model_add(name + "+", at, self.follow_up[name])
        already = len(self.fired)
        self.clock.advance(ms)
        fired = self.fired[already:]
        times = [t for _, t in fired]
        assert times == sorted(times), "fired out of deadline order"
        # Nothing early, nothing late, nothing cancelled or completed, nothing twice.
        assert sorted(fired) == sorted(expected)

    @invariant()
    def size_matches_the_model(self) -> None:
        assert self.timer.size == len(self.model)

    @invariant()
    def next_deadline_is_a_lower_bound_and_nothing_due_is_left(self) -> None:
        deadline = self.timer.next_deadline_ms()
        if self.model:
            assert deadline is not None and deadline <= self.model[0][0]
            assert self.model[0][0] >= self.clock.now_ms()
        else:
            assert deadline is None

    @invariant()
    def operations_complete_exactly_once(self) -> None:
        assert all(n == 1 for n in self.completes.values())


TestWheelAgainstSortedList = WheelAgainstSortedList.TestCase
TestWheelAgainstSortedList.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)


@settings(max_examples=100, deadline=None)
@given(
    wheel=WHEELS,
    delays=st.lists(DELAYS, min_size=1, max_size=40),
    offsets=st.data(),
)
def test_completion_racing_expiry_runs_on_complete_exactly_once(
    wheel: tuple[int, int], delays: list[int], offsets: st.DataObject
) -> None:
    """An event completing each operation lands in the same tick as its timeout, or one either side."""
    tick, size = wheel
    clock = ManualClock(1_000_000)
    timer = Timer(clock, tick_ms=tick, wheel_size=size)
    fired: list[tuple[str, int]] = []
    completes: Counter[str] = Counter()
    ops = []
    for i, delay in enumerate(delays):
        op = Op(delay, f"op{i}", clock, fired, completes)
        event_delay = delay + offsets.draw(st.sampled_from([-tick, 0, 0, tick]))
        if offsets.draw(st.booleans()):  # event first or timeout first in the same bucket
            timer.schedule(event_delay, op.force_complete)
            timer.add(op)
        else:
            timer.add(op)
            timer.schedule(event_delay, op.force_complete)
        ops.append(op)
    clock.advance(max(delays) + 2 * tick + 1)
    assert all(completes[op.name] == 1 for op in ops)
    assert all(op.is_completed for op in ops)
    assert len(fired) == len({name for name, _ in fired})
    assert timer.size == 0
    assert timer.next_deadline_ms() is None
