"""The timing wheel under a virtual clock: deadlines, order, cancel, cascade and re-add."""

from __future__ import annotations

import pytest

from kafkito.purgatory import ManualClock, Timer, TimerTask


def _recorder(clock: ManualClock, fired: list[tuple[str, int]], name: str):  # type: ignore[no-untyped-def]
    return lambda: fired.append((name, clock.now_ms()))


def test_task_fires_exactly_at_its_deadline_not_a_tick_before() -> None:
    clock = ManualClock(1_000)
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    timer.schedule(15, _recorder(clock, fired, "a"))
    clock.advance(14)
    assert fired == []
    clock.advance(1)
    assert fired == [("a", 1_015)]
    assert timer.size == 0


@pytest.mark.parametrize("delay", [1, 19, 20, 399, 400, 401, 7_999, 8_000, 160_000, 3_600_000, 86_400_000])
def test_every_level_fires_at_the_deadline(delay: int) -> None:
    clock = ManualClock(123_457)
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    timer.schedule(delay, _recorder(clock, fired, "t"))
    clock.advance(delay - 1)
    assert fired == []
    clock.advance(1)
    assert fired == [("t", 123_457 + delay)]


def test_tasks_fire_in_deadline_order_across_levels() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    delays = [5_000, 3, 70_000, 399, 21, 401, 3_600_000, 20]
    for d in delays:
        timer.schedule(d, _recorder(clock, fired, str(d)))
    clock.advance(4_000_000)
    assert fired == [(str(d), d) for d in sorted(delays)]


def test_cancelled_task_never_fires_and_leaves_the_timer_idle() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    task = timer.schedule(50, _recorder(clock, fired, "x"))
    keep = timer.schedule(60, _recorder(clock, fired, "y"))
    assert timer.size == 2
    task.cancel()
    task.cancel()
    assert timer.size == 1
    clock.advance(100)
    assert fired == [("y", 60)]
    assert not keep.is_pending
    assert timer.next_deadline_ms() is None


def test_task_due_when_added_fires_at_the_next_advance_not_inside_add() -> None:
    clock = ManualClock(10)
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    timer.schedule(0, _recorder(clock, fired, "now"))
    timer.schedule(-5, _recorder(clock, fired, "overdue"))
    assert fired == []
    assert timer.next_deadline_ms() == 10
    assert timer.advance_clock() == 2
    assert sorted(fired) == [("now", 10), ("overdue", 10)]


def test_adding_a_pending_task_moves_it() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []
    task = timer.schedule(100, _recorder(clock, fired, "hb"))
    clock.advance(90)
    timer.add(task)
    assert timer.size == 1
    clock.advance(99)
    assert fired == []
    clock.advance(1)
    assert fired == [("hb", 190)]
    timer.add(task)  # and a fired (or cancelled) task can be added again
    clock.advance(100)
    assert fired == [("hb", 190), ("hb", 290)]


def test_callbacks_scheduling_inside_the_window_fire_at_their_own_deadline() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[int] = []

    def chain() -> None:
        fired.append(clock.now_ms())
        if len(fired) < 5:
            timer.schedule(7, chain)

    timer.schedule(7, chain)
    clock.advance(1_000)
    assert fired == [7, 14, 21, 28, 35]


def test_coarse_tick_rounds_deadlines_up_so_nothing_fires_early() -> None:
    clock = ManualClock(3)
    timer = Timer(clock, tick_ms=10)
    fired: list[tuple[str, int]] = []
    timer.schedule(5, _recorder(clock, fired, "a"))  # due at 8, fires at the 10 ms tick
    clock.advance(4)
    assert fired == []
    clock.advance(3)
    assert fired == [("a", 10)]


def test_a_failing_task_does_not_stop_the_others() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []

    def boom() -> None:
        raise RuntimeError("boom")

    timer.schedule(5, boom)
    timer.schedule(5, _recorder(clock, fired, "after"))
    clock.advance(5)
    assert fired == [("after", 5)]


def test_cancel_from_a_callback_stops_a_task_due_at_the_same_time() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[str] = []
    victim: list[TimerTask] = []

    def first() -> None:
        fired.append("first")
        victim[0].cancel()

    timer.schedule(30, first)
    victim.append(timer.schedule(30, lambda: fired.append("victim")))
    clock.advance(30)
    assert fired == ["first"]


def test_next_deadline_tracks_the_earliest_bucket() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    assert timer.next_deadline_ms() is None
    a = timer.schedule(5, lambda: None)
    timer.schedule(500, lambda: None)
    assert timer.next_deadline_ms() == 5
    a.cancel()
    deadline = timer.next_deadline_ms()
    assert deadline is not None and deadline <= 500


def test_two_timers_on_one_manual_clock_interleave_in_deadline_order() -> None:
    clock = ManualClock()
    t1, t2 = Timer(clock), Timer(clock)
    fired: list[tuple[str, int]] = []
    t1.schedule(30, _recorder(clock, fired, "t1-30"))
    t2.schedule(10, _recorder(clock, fired, "t2-10"))
    t1.schedule(20, _recorder(clock, fired, "t1-20"))
    clock.advance(50)
    assert fired == [("t2-10", 10), ("t1-20", 20), ("t1-30", 30)]


def test_manual_clock_refuses_to_go_backwards() -> None:
    with pytest.raises(ValueError):
        ManualClock().advance(-1)


@pytest.mark.parametrize("wheel_size", [2, 3, 20])
def test_an_overdue_task_does_not_pull_a_pending_bucket_forward(wheel_size: int) -> None:
    clock = ManualClock(100)
    timer = Timer(clock, wheel_size=wheel_size)
    fired: list[tuple[str, int]] = []
    for delay in range(1, 2 * wheel_size):
        timer.schedule(delay, _recorder(clock, fired, f"d{delay}"))
    for overdue in range(-2 * wheel_size, 0):
        timer.schedule(overdue, _recorder(clock, fired, "late"))
    clock.advance(0)
    assert [name for name, _ in fired] == ["late"] * 2 * wheel_size
    clock.advance(2 * wheel_size)
    assert fired[2 * wheel_size :] == [(f"d{d}", 100 + d) for d in range(1, 2 * wheel_size)]


def test_tasks_left_behind_by_an_escaping_base_exception_still_fire() -> None:
    clock = ManualClock()
    timer = Timer(clock)
    fired: list[tuple[str, int]] = []

    def interrupt() -> None:
        raise KeyboardInterrupt

    timer.schedule(10, interrupt)
    timer.schedule(10, _recorder(clock, fired, "same-tick"))
    timer.schedule(11, _recorder(clock, fired, "next-tick"))
    with pytest.raises(KeyboardInterrupt):
        clock.advance(20)
    assert clock.now_ms() == 10  # the interrupted advance stopped at the failing deadline
    assert timer.size == 2
    clock.advance(0)
    assert fired == [("same-tick", 10)]
    clock.advance(10)
    assert fired == [("same-tick", 10), ("next-tick", 11)]
