"""Injected millisecond clocks: the monotonic one, the broker's (wall-clock milliseconds that never go
backwards, plus a skip that tests steer) and a manual one for virtual time."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the time in whole milliseconds on a clock that never goes backwards."""

    def now_ms(self) -> int: ...


class _Steppable(Protocol):
    """What ManualClock needs from a timer built on it (kept structural to avoid an import cycle)."""

    def next_deadline_ms(self) -> int | None: ...

    def advance_clock(self) -> int: ...


class MonotonicClock:
    """The real clock: `time.monotonic_ns()` in whole milliseconds (the same base as `loop.time()`)."""

    __slots__ = ()

    def now_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000


class SteerableClock:
    """The broker's clock: the wall clock in epoch milliseconds, never going backwards, plus an offset
    that only grows (`skip_to`).

    Stored times (commit and expiry timestamps, group and transaction state times, share-group
    delivery times, the timeline) are wall-clock milliseconds, as Kafka's are, whatever the
    machine's uptime: nothing stored derives from the monotonic clock. The clock follows the wall
    clock, slewing included; if the wall clock is stepped back, the clock does not follow it back
    but keeps moving at the monotonic clock's pace until the wall clock catches up, so deadlines on
    it still come due. Real time keeps running; a test moves the broker ahead of it
    (`Steering.advance`) so that what is due by then (session timeouts, transaction timeouts, offset
    retention) fires now, and the records written meanwhile carry the moved time. Timers only use
    differences of this clock (`Timer` arms `loop.call_at` relative to `loop.time()`).

    `monotonic_ns` and `wall_ns` are injectable: tests give a monotonic clock that starts near 0, as
    on a machine just booted, and a wall clock that is stepped back.
    """

    __slots__ = ("_last_monotonic_ns", "_last_ns", "_monotonic_ns", "_offset_ms", "_wall_ns")

    def __init__(
        self,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._monotonic_ns = monotonic_ns
        self._wall_ns = wall_ns
        self._last_ns = wall_ns()  # the last reading, without the offset
        self._last_monotonic_ns = monotonic_ns()
        self._offset_ms = 0

    def now_ms(self) -> int:
        wall = self._wall_ns()
        monotonic = self._monotonic_ns()
        last = self._last_ns
        # Behind the last reading: the wall clock was stepped back. Move on at the monotonic pace.
        now = wall if wall >= last else last + max(monotonic - self._last_monotonic_ns, 0)
        self._last_ns = now
        self._last_monotonic_ns = monotonic
        return now // 1_000_000 + self._offset_ms

    @property
    def offset_ms(self) -> int:
        """How far the clock has been moved ahead of real time."""
        return self._offset_ms

    def skip_to(self, target_ms: int) -> None:
        """Move the clock forward so that `now_ms() >= target_ms` (a no-op when it is already there)."""
        behind = target_ms - self.now_ms()
        if behind > 0:
            self._offset_ms += behind


class ManualClock:
    """Virtual time for tests: it only moves on `advance()`, which fires every due task of its timers."""

    __slots__ = ("__weakref__", "_now_ms", "_timers")

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._timers: list[weakref.ref[_Steppable]] = []

    def now_ms(self) -> int:
        return self._now_ms

    def attach_timer(self, timer: _Steppable) -> None:
        """Called by `Timer.__init__`: `advance()` drives every timer built on this clock."""
        self._timers.append(weakref.ref(timer))

    def advance(self, ms: int) -> None:
        """Move time forward by `ms`, stepping through each due deadline in order.

        The clock stops at every bucket deadline on the way so that a task fires with `now_ms()` equal
        to its deadline, and tasks that callbacks schedule inside the window fire at their own deadline.
        """
        if ms < 0:
            raise ValueError(f"time cannot go backwards (advance by {ms} ms)")
        target = self._now_ms + ms
        while True:
            timers = self._live_timers()
            step: int | None = None
            for timer in timers:
                deadline = timer.next_deadline_ms()
                if deadline is not None and (step is None or deadline < step):
                    step = deadline
            if step is None or step > target:
                break
            if step > self._now_ms:
                self._now_ms = step
            for timer in timers:
                timer.advance_clock()
        self._now_ms = target
        for timer in self._live_timers():
            timer.advance_clock()

    def _live_timers(self) -> list[_Steppable]:
        live = [t for ref in self._timers if (t := ref()) is not None]
        if len(live) != len(self._timers):
            self._timers = [weakref.ref(t) for t in live]
        return live
