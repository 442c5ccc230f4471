"""Delayed operations and the purgatory: exactly-once completion, watch keys, counters and purging."""

from __future__ import annotations

import pytest

from kafkito.purgatory import DelayedOperation, ManualClock, Purgatory, Timer


class FlagOp(DelayedOperation):
    """Completes once `ready` is set; `events` records on_complete/on_expiration in order."""

    def __init__(self, delay_ms: int, name: str = "op") -> None:
        super().__init__(delay_ms)
        self.name = name
        self.ready = False
        self.tries = 0
        self.events: list[str] = []

    def try_complete(self) -> bool:
        self.tries += 1
        if self.ready:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.events.append("complete")

    def on_expiration(self) -> None:
        self.events.append("expire")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(5_000)


@pytest.fixture
def timer(clock: ManualClock) -> Timer:
    return Timer(clock)


def test_force_complete_wins_exactly_once_and_cancels_the_timeout(clock: ManualClock, timer: Timer) -> None:
    op = FlagOp(100)
    timer.add(op)
    assert op.force_complete() is True
    assert op.force_complete() is False
    assert op.is_completed
    assert timer.size == 0
    clock.advance(1_000)
    assert op.events == ["complete"]


def test_expiry_runs_on_complete_then_on_expiration(clock: ManualClock, timer: Timer) -> None:
    op = FlagOp(100)
    timer.add(op)
    clock.advance(99)
    assert op.events == []
    clock.advance(1)
    assert op.events == ["complete", "expire"]
    assert op.force_complete() is False
    assert op.events == ["complete", "expire"]


def test_completion_from_a_callback_due_at_the_same_tick_beats_the_expiry(
    clock: ManualClock, timer: Timer
) -> None:
    op = FlagOp(50)
    timer.schedule(50, op.force_complete)  # scheduled first, so it runs first within the tick
    timer.add(op)
    clock.advance(50)
    assert op.events == ["complete"]


def test_operation_abstract_methods_are_required() -> None:
    class Incomplete(DelayedOperation):
        def try_complete(self) -> bool:
            return False

    with pytest.raises(TypeError):
        Incomplete(10)  # type: ignore[abstract]


def test_ready_operation_completes_at_once_without_being_watched(timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("join", timer)
    op = FlagOp(100)
    op.ready = True
    assert purgatory.try_complete_else_watch(op, ["g1"]) is True
    assert op.events == ["complete"]
    assert (purgatory.pending, purgatory.watched(), purgatory.completions) == (0, 0, 1)
    assert timer.size == 0


def test_watched_operation_completes_on_its_key(clock: ManualClock, timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("join", timer)
    op = FlagOp(100)
    assert purgatory.try_complete_else_watch(op, ["g1", "g2"]) is False
    assert op.tries == 2  # try, watch, try again
    assert (purgatory.pending, purgatory.watched(), purgatory.num_watched, timer.size) == (1, 2, 2, 1)
    assert purgatory.check_and_complete("g1") == 0
    op.ready = True
    assert purgatory.check_and_complete("other") == 0
    assert purgatory.check_and_complete("g1") == 1
    assert op.events == ["complete"]
    assert (purgatory.pending, purgatory.completions, purgatory.expirations, timer.size) == (0, 1, 0, 0)
    assert purgatory.watched() == 1  # still listed under g2 until that key is checked or purged
    assert purgatory.check_and_complete("g2") == 0
    assert purgatory.watched() == 0
    assert purgatory.num_keys == 0
    clock.advance(1_000)
    assert op.events == ["complete"]


def test_watched_operation_expires(clock: ManualClock, timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("heartbeat", timer)
    op = FlagOp(3_000)
    purgatory.try_complete_else_watch(op, ["member-1"])
    clock.advance(2_999)
    assert op.events == []
    clock.advance(1)
    assert op.events == ["complete", "expire"]
    assert (purgatory.pending, purgatory.completions, purgatory.expirations) == (0, 0, 1)
    op.ready = True
    assert purgatory.check_and_complete("member-1") == 0
    assert purgatory.watched() == 0


def test_event_raised_by_the_first_try_is_caught_by_the_second_try(timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("sync", timer)

    class SelfReadying(FlagOp):
        def try_complete(self) -> bool:
            if self.tries == 0:
                self.ready = True  # the event fires while we are not yet watched
                purgatory.check_and_complete("k")
            return super().try_complete()

    op = SelfReadying(100)
    assert purgatory.try_complete_else_watch(op, ["k"]) is True
    assert timer.size == 0
    assert op.events == ["complete"]


def test_operations_added_on_a_key_while_it_is_checked_stay_watched(timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("join", timer)
    late = FlagOp(100, "late")

    class Spawner(FlagOp):
        def on_complete(self) -> None:
            super().on_complete()
            purgatory.try_complete_else_watch(late, ["k"])

    first = Spawner(100)
    stays = FlagOp(100, "stays")
    purgatory.try_complete_else_watch(first, ["k"])
    purgatory.try_complete_else_watch(stays, ["k"])
    first.ready = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.watched() == 2
    stays.ready = late.ready = True
    assert purgatory.check_and_complete("k") == 2
    assert purgatory.watched() == 0


def test_operation_cannot_join_two_purgatories(timer: Timer) -> None:
    a: Purgatory[FlagOp] = Purgatory("a", timer)
    b: Purgatory[FlagOp] = Purgatory("b", timer)
    op = FlagOp(100)
    a.try_complete_else_watch(op, ["k"])
    with pytest.raises(ValueError):
        b.try_complete_else_watch(op, ["k"])


def test_purge_drops_completed_operations_from_watcher_lists(timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("fetch", timer, purge_interval=10)
    live = [FlagOp(60_000, f"live-{i}") for i in range(5)]
    for i, op in enumerate(live):
        purgatory.try_complete_else_watch(op, [f"live-{i}", "shared"])
    done = [FlagOp(60_000, f"done-{i}") for i in range(11)]
    for i, op in enumerate(done):
        purgatory.try_complete_else_watch(op, [f"done-{i}", "shared"])
    assert purgatory.watched() == 32
    for op in done[:10]:
        op.force_complete()  # completed directly, so nobody checks their keys
    assert purgatory.purges == 0
    assert purgatory.watched() == 32
    done[10].force_complete()  # the 11th completion exceeds purge_interval
    assert purgatory.purges == 1
    assert purgatory.watched() == 10
    assert purgatory.num_keys == 6
    assert (purgatory.pending, purgatory.completions) == (5, 11)


def test_purge_waits_for_completions_to_outnumber_pending_operations(timer: Timer) -> None:
    purgatory: Purgatory[FlagOp] = Purgatory("fetch", timer, purge_interval=2)
    ops = [FlagOp(60_000) for _ in range(10)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [i])
    for op in ops[:4]:
        op.force_complete()
    assert purgatory.purges == 0  # 4 completed vs 6 pending: a purge would mostly walk live entries
    ops[4].force_complete()
    assert purgatory.purges == 0
    ops[5].force_complete()
    assert purgatory.purges == 1
    assert purgatory.watched() == 4
