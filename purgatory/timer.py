"""A hierarchical timing wheel (Kafka's design): O(1) add and cancel, driven by a clock or the loop."""

from __future__ import annotations

import asyncio
import heapq
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import count

import structlog

from kafkito.purgatory.clock import Clock, ManualClock

log = structlog.get_logger(__name__)


class TimerTask(ABC):
    """Something the timer holds until its deadline; an intrusive list node, so cancel is O(1).

    A task may be added again after it was cancelled or after it fired; adding a pending task moves it.
    Tasks compare by identity (the timer never hashes them), so subclasses may be dataclasses.
    """

    __slots__ = ("_bucket", "_deadline_ms", "_next", "_prev", "delay_ms")

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self._deadline_ms = 0
        self._bucket: _Bucket | None = None
        self._next: TimerTask | _Bucket | None = None
        self._prev: TimerTask | _Bucket | None = None

    @property
    def deadline_ms(self) -> int:
        """When the task is (or was last) due, on the timer's clock; 0 before it was ever added."""
        return self._deadline_ms

    @property
    def is_pending(self) -> bool:
        return self._bucket is not None

    def cancel(self) -> None:
        """Take the task out of the timer (O(1)); a no-op if it is not pending."""
        bucket = self._bucket
        if bucket is not None:
            prev = self._prev
            nxt = self._next
            prev._next = nxt  # type: ignore[union-attr]
            nxt._prev = prev  # type: ignore[union-attr]
            self._bucket = self._next = self._prev = None
            timer = bucket.timer
            timer._size -= 1
            if timer._size == 0:
                timer._went_idle()

    @abstractmethod
    def run(self) -> None:
        """Called by the timer once the deadline has passed."""


class _CallbackTask(TimerTask):
    """The task behind `Timer.schedule`: calls a plain callback."""

    __slots__ = ("_callback",)

    def __init__(self, delay_ms: int, callback: Callable[[], object]) -> None:
        # TimerTask.__init__ inlined (`Timer.schedule` sets the links and the deadline at once).
        self.delay_ms = delay_ms
        self._bucket = None
        self._callback = callback

    def run(self) -> None:
        self._callback()


class _Bucket:
    """One slot of a wheel: the sentinel of a circular list of tasks sharing one bucket deadline.

    `expiration` is the deadline it is queued for (-1: not queued); a heap entry carrying any other
    value is stale. A bucket emptied by cancels stays queued: dropping it would cost a heap operation
    (and maybe a loop re-arm) per cancel; it is skipped when it reaches the top of the queue.
    """

    __slots__ = ("_next", "_prev", "expiration", "timer")

    def __init__(self, timer: Timer) -> None:
        self._next: TimerTask | _Bucket = self
        self._prev: TimerTask | _Bucket = self
        self.expiration = -1
        self.timer = timer


class _Wheel:
    """One level: `size` buckets of `tick` ms each, spanning `interval` ms from `current`.

    `limit` (current + interval) and `current_vid` (current // tick) are cached for the add path.
    """

    __slots__ = ("buckets", "current", "current_vid", "interval", "limit", "size", "tick")

    def __init__(self, timer: Timer, tick: int, size: int, start_ms: int) -> None:
        self.tick = tick
        self.size = size
        self.interval = tick * size
        self.buckets = [_Bucket(timer) for _ in range(size)]
        self.current = self.current_vid = self.limit = 0
        self.set_current(start_ms)

    def set_current(self, time_ms: int) -> None:
        self.current_vid = time_ms // self.tick
        self.current = self.current_vid * self.tick
        self.limit = self.current + self.interval


class Timer:
    """Kafka's hierarchical timing wheel: levels of `wheel_size` buckets, overflow levels made lazily.

    Level k has buckets of `tick_ms * wheel_size**k` ms (defaults: 1 ms, 20 ms, 400 ms, 8 s, 160 s, ...).
    Buckets (not tasks) are queued in a heap by deadline, so queue operations cost O(log buckets) and
    add/cancel cost O(levels)/O(1) however many tasks are pending. Tasks never fire before their
    deadline (rounded up to the tick) and fire in deadline order. A task due when it is added fires
    at the next `advance_clock()`, never inside `add()`; one added by a callback while the timer
    fires, with a deadline already reached, fires in that same pass.

    Drive it either by calling `advance_clock()` (a `ManualClock` does this on `advance`) or with
    `attach_loop()`, which keeps a single `loop.call_at` armed for the earliest non-empty bucket,
    and none at all while nothing is pending. Exceptions from tasks are logged, not raised.
    """

    __slots__ = (
        "__weakref__",
        "_advancing",
        "_armed_ms",
        "_clock",
        "_handle",
        "_loop",
        "_now_ms",
        "_queue",
        "_seq",
        "_size",
        "_size_per_wheel",
        "_tick",
        "_wheels",
        "loop_wakeups",
    )

    def __init__(self, clock: Clock, tick_ms: int = 1, wheel_size: int = 20) -> None:
        if tick_ms < 1 or wheel_size < 2:
            raise ValueError("tick_ms must be >= 1 and wheel_size >= 2")
        self._clock = clock
        self._now_ms = clock.now_ms
        self._tick = tick_ms
        self._size_per_wheel = wheel_size
        self._wheels = [_Wheel(self, tick_ms, wheel_size, clock.now_ms())]
        self._queue: list[tuple[int, int, _Bucket]] = []
        self._size = 0
        self._seq = count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._armed_ms = -1
        self._advancing = False
        self.loop_wakeups = 0
        if isinstance(clock, ManualClock):
            clock.attach_timer(self)

    @property
    def size(self) -> int:
        """How many tasks are pending."""
        return self._size

    @property
    def armed_ms(self) -> int | None:
        """The bucket deadline the loop handle is armed for; None when no handle is scheduled."""
        return self._armed_ms if self._handle is not None else None

    def schedule(self, delay_ms: int, callback: Callable[[], object]) -> TimerTask:
        """Call `callback` once `delay_ms` have passed; returns the task, whose `cancel()` undoes it."""
        task = _CallbackTask(delay_ms, callback)
        deadline = self._now_ms() + delay_ms
        if self._tick != 1:
            deadline = -(-deadline // self._tick) * self._tick
        task._deadline_ms = deadline
        self._place(task, deadline)  # `add` inlined: a new task is never pending
        return task

    def add(self, task: TimerTask) -> None:
        """Hold `task` until `delay_ms` from now (moving it if it is already pending)."""
        bucket = task._bucket
        if bucket is not None:
            if bucket.timer is self:
                # Moving: unlink without `cancel`, which would disarm the loop if this was the last task.
                prev = task._prev
                nxt = task._next
                prev._next = nxt  # type: ignore[union-attr]
                nxt._prev = prev  # type: ignore[union-attr]
                self._size -= 1
            else:
                task.cancel()
        deadline = self._now_ms() + task.delay_ms
        tick = self._tick
        if tick != 1:
            deadline = -(-deadline // tick) * tick
        task._deadline_ms = deadline
        self._place(task, deadline)

    def _place(self, task: TimerTask, deadline: int) -> None:
        for wheel in self._wheels:
            if deadline < wheel.limit:
                break
        else:
            wheel = self._add_overflow_wheels(deadline)
        vid = deadline // wheel.tick
        if vid <= wheel.current_vid:
            vid = wheel.current_vid  # overdue (only possible on the finest wheel): due at once
        bucket = wheel.buckets[vid % wheel.size]
        tail = bucket._prev
        task._prev = tail
        task._next = bucket
        tail._next = task
        bucket._prev = task
        task._bucket = bucket
        self._size += 1
        expiration = vid * wheel.tick
        if bucket.expiration != expiration:
            bucket.expiration = expiration
            heapq.heappush(self._queue, (expiration, next(self._seq), bucket))
            if (
                self._loop is not None
                and not self._advancing
                and (self._handle is None or expiration < self._armed_ms)
            ):
                self._rearm()

    def _add_overflow_wheels(self, deadline: int) -> _Wheel:
        wheels = self._wheels
        wheel = wheels[-1]
        while deadline >= wheel.limit:
            wheel = _Wheel(self, wheel.interval, self._size_per_wheel, wheel.current)
            wheels.append(wheel)
        return wheel

    def next_deadline_ms(self) -> int | None:
        """When the timer next has work: the earliest non-empty bucket's deadline (no task is due before)."""
        queue = self._queue
        while queue:
            expiration, _, bucket = queue[0]
            if bucket.expiration == expiration:
                if bucket._next is not bucket:
                    return expiration
                bucket.expiration = -1  # emptied by cancels: unqueue it now
            heapq.heappop(queue)
        return None

    def advance_clock(self) -> int:
        """Fire every task due at `clock.now_ms()`, in deadline order; returns how many fired."""
        now = self._now_ms()
        queue = self._queue
        fired = 0
        was_advancing = self._advancing
        self._advancing = True
        try:
            while queue and queue[0][0] <= now:
                expiration, _, bucket = heapq.heappop(queue)
                if bucket.expiration == expiration:  # else stale: emptied or re-queued since
                    fired += self._flush(bucket, expiration)
            self._advance_wheels(now)
        finally:
            self._advancing = was_advancing
            if self._loop is not None and not was_advancing:
                self._rearm()
        return fired

    def _flush(self, bucket: _Bucket, expiration: int) -> int:
        """Empty a due bucket: run the tasks that are due, cascade the others to finer wheels."""
        bucket.expiration = -1
        self._advance_wheels(expiration)
        current = self._wheels[0].current
        fired = 0
        try:
            while True:
                # The bucket is its own list's sentinel: typed as a task, compared by identity (no
                # isinstance on the hot path).
                task: TimerTask = bucket._next  # type: ignore[assignment]
                if task is bucket:  # type: ignore[comparison-overlap]
                    return fired
                nxt = task._next
                bucket._next = nxt  # type: ignore[assignment]
                nxt._prev = bucket  # type: ignore[union-attr]
                task._bucket = task._next = task._prev = None
                self._size -= 1
                if task._deadline_ms <= current:
                    fired += 1
                    try:
                        task.run()
                    except Exception:
                        log.exception("timer task failed", task=type(task).__name__)
                else:
                    self._place(task, task._deadline_ms)
        finally:
            if bucket._next is not bucket and bucket.expiration == -1:
                # A BaseException escaped a task: keep the rest of the bucket queued.
                bucket.expiration = expiration
                heapq.heappush(self._queue, (expiration, next(self._seq), bucket))

    def _advance_wheels(self, time_ms: int) -> None:
        for wheel in self._wheels:
            if time_ms >= wheel.current + wheel.tick:
                wheel.set_current(time_ms)

    def _went_idle(self) -> None:
        """The last pending task was cancelled: unqueue every bucket and disarm the loop handle."""
        if self._advancing:
            return  # advance_clock re-arms (or disarms) when it is done
        for _, _, bucket in self._queue:
            bucket.expiration = -1
        self._queue.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
            self._armed_ms = -1

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Let `loop` drive the timer: one `call_at` armed for the earliest non-empty bucket."""
        self.close()
        self._loop = loop
        self._rearm()

    def close(self) -> None:
        """Detach from the loop and cancel its handle; pending tasks stay (advance_clock still works)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._loop = None
        self._armed_ms = -1

    def _rearm(self) -> None:
        loop = self._loop
        assert loop is not None
        deadline = self.next_deadline_ms()
        handle = self._handle
        if handle is not None:
            if deadline == self._armed_ms:
                return
            handle.cancel()
            self._handle = None
        if deadline is None:
            self._armed_ms = -1
            return
        self._armed_ms = deadline
        when = loop.time() + (deadline - self._now_ms()) / 1000.0
        self._handle = loop.call_at(when, self._on_loop_timer)

    def _on_loop_timer(self) -> None:
        self.loop_wakeups += 1
        self._handle = None
        self._armed_ms = -1
        self.advance_clock()
