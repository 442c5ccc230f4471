"""Property tests: the purgatory against a model of live operations, watch keys and the purge bound."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kafkito.purgatory import DelayedOperation, ManualClock, Purgatory, Timer

KEYS = st.lists(st.integers(0, 7), min_size=0, max_size=3)


class KeyedOp(DelayedOperation):
    """Completes when any of its keys has been marked ready."""

    def __init__(self, delay_ms: int, keys: list[int], ready: set[int], name: int) -> None:
        super().__init__(delay_ms)
        self.keys = keys
        self.ready = ready
        self.name = name
        self.completions = 0
        self.expired = False

    def try_complete(self) -> bool:
        if any(k in self.ready for k in self.keys):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expired = True


class PurgatoryAgainstModel(RuleBasedStateMachine):
    @initialize(purge_interval=st.integers(0, 6))
    def setup(self, purge_interval: int) -> None:
        self.clock = ManualClock()
        self.timer = Timer(self.clock)
        self.purgatory: Purgatory[KeyedOp] = Purgatory("p", self.timer, purge_interval=purge_interval)
        self.ready: set[int] = set()
        self.ops: list[KeyedOp] = []
        self.expected_completions = 0
        self.expected_expirations = 0

    def _live(self) -> list[KeyedOp]:
        return [op for op in self.ops if not op.is_completed]

    @rule(delay=st.integers(0, 2_000), keys=KEYS)
    def watch(self, delay: int, keys: list[int]) -> None:
        op = KeyedOp(delay, keys, self.ready, len(self.ops))
        immediate = any(k in self.ready for k in keys)
        assert self.purgatory.try_complete_else_watch(op, keys) is immediate
        self.expected_completions += immediate
        self.ops.append(op)

    @rule(key=st.integers(0, 7))
    def event_on_key(self, key: int) -> None:
        self.ready.add(key)
        watching = [op for op in self._live() if key in op.keys]
        assert self.purgatory.check_and_complete(key) == len(watching)
        self.expected_completions += len(watching)
        self.ready.discard(key)  # the event is consumed

    @precondition(lambda self: any(not op.is_completed for op in self.ops))
    @rule(data=st.data())
    def complete_directly(self, data: st.DataObject) -> None:
        op = data.draw(st.sampled_from(self._live()))
        assert op.force_complete()
        self.expected_completions += 1

    @rule(ms=st.integers(0, 800))
    def advance(self, ms: int) -> None:
        due = [op for op in self._live() if op.deadline_ms <= self.clock.now_ms() + ms]
        self.clock.advance(ms)
        assert all(op.expired for op in due)
        self.expected_expirations += len(due)

    @invariant()
    def counters_match(self) -> None:
        live = self._live()
        assert self.purgatory.pending == len(live) == self.timer.size
        assert self.purgatory.completions == self.expected_completions
        assert self.purgatory.expirations == self.expected_expirations
        assert all(op.completions == (1 if op.is_completed else 0) for op in self.ops)

    @invariant()
    def completed_entries_stay_bounded(self) -> None:
        """Completed operations linger in watcher lists only until max(purge_interval, pending) finish."""
        live_entries = sum(len(op.keys) for op in self._live())
        stale = self.purgatory.watched() - live_entries
        assert stale >= 0
        assert stale <= 3 * max(self.purgatory.purge_interval, self.purgatory.pending)

    def teardown(self) -> None:
        if hasattr(self, "purgatory"):
            self.purgatory.purge_completed()
            assert self.purgatory.watched() == sum(len(op.keys) for op in self._live())
            assert self.purgatory.num_keys == len({k for op in self._live() for k in op.keys})


TestPurgatoryAgainstModel = PurgatoryAgainstModel.TestCase
TestPurgatoryAgainstModel.settings = settings(max_examples=150, stateful_step_count=50, deadline=None)
