"""The timer driven by a real event loop (default and uvloop): on time, and idle once nothing is pending."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest
import uvloop

from kafkito.purgatory import DelayedOperation, MonotonicClock, Purgatory, Timer

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}


def _run(loop_name: str, main: Callable[[], object]) -> None:
    with asyncio.Runner(loop_factory=LOOPS[loop_name]) as runner:
        runner.run(main())  # type: ignore[arg-type]


def _idle(loop: asyncio.AbstractEventLoop, timer: Timer) -> bool:
    """No timer handle armed: ours is None and (where the loop lets us look) none is scheduled."""
    scheduled = getattr(loop, "_scheduled", [])
    return timer.armed_ms is None and not [h for h in scheduled if not h.cancelled()]


class ClockedOp(DelayedOperation):
    """Records when it finished on the timer's clock and whether by its timeout."""

    def __init__(self, delay_ms: int, clock: MonotonicClock, done: Callable[[], None]) -> None:
        super().__init__(delay_ms)
        self.clock = clock
        self.done = done
        self.finished_at = -1
        self.expired = False
        self.completions = 0

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        self.completions += 1
        self.finished_at = self.clock.now_ms()
        self.done()

    def on_expiration(self) -> None:
        self.expired = True


@pytest.mark.parametrize("loop_name", sorted(LOOPS))
def test_ten_thousand_operations_finish_on_time_then_the_loop_is_idle(loop_name: str) -> None:
    rng = random.Random(7)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        clock = MonotonicClock()
        timer = Timer(clock)
        timer.attach_loop(loop)
        purgatory: Purgatory[ClockedOp] = Purgatory("test", timer, purge_interval=100)
        all_done = asyncio.Event()
        remaining = [10_000]

        def done() -> None:
            remaining[0] -= 1
            if remaining[0] == 0:
                all_done.set()

        ops = [ClockedOp(rng.randint(0, 150), clock, done) for _ in range(10_000)]
        for i, op in enumerate(ops):
            purgatory.try_complete_else_watch(op, [i % 97])
        early = ops[::5]  # a fifth completes by an event before its timeout can
        for op in early:
            if op.deadline_ms > clock.now_ms():
                op.force_complete()
        await asyncio.wait_for(all_done.wait(), timeout=60)

        assert all(op.completions == 1 for op in ops)
        for op in ops:
            if op.expired:
                assert op.finished_at >= op.deadline_ms, "fired before its deadline"
        assert purgatory.pending == 0
        assert purgatory.completions + purgatory.expirations == 10_000
        assert purgatory.expirations >= 10_000 - len(early)
        assert timer.size == 0
        assert _idle(loop, timer)
        timer.close()

    _run(loop_name, main)


@pytest.mark.parametrize("loop_name", sorted(LOOPS))
def test_a_distant_deadline_costs_a_handful_of_wakeups_not_one_per_tick(loop_name: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        clock = MonotonicClock()
        timer = Timer(clock)
        timer.attach_loop(loop)
        fired = loop.create_future()
        start = clock.now_ms()
        timer.schedule(300, lambda: fired.set_result(clock.now_ms()))
        fired_at = await asyncio.wait_for(fired, timeout=30)
        assert fired_at >= start + 300
        # 300 ms on 1 ms ticks: a polling timer would wake ~300 times; the wheel wakes once per level
        # it cascades through (plus a retry if the loop's clock rounds a wakeup early).
        assert timer.loop_wakeups <= 8
        assert _idle(loop, timer)

    _run(loop_name, main)


@pytest.mark.parametrize("loop_name", sorted(LOOPS))
def test_cancelling_everything_disarms_the_loop_handle(loop_name: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        timer = Timer(MonotonicClock())
        timer.attach_loop(loop)
        tasks = [timer.schedule(d, lambda: None) for d in (50, 5_000, 600_000)]
        assert timer.armed_ms is not None
        for task in tasks:
            task.cancel()
        assert _idle(loop, timer)
        tasks[0] = timer.schedule(10, lambda: None)
        assert timer.armed_ms is not None
        timer.close()
        assert _idle(loop, timer)

    _run(loop_name, main)


@pytest.mark.parametrize("loop_name", sorted(LOOPS))
def test_moving_the_only_pending_task_keeps_one_handle_armed(loop_name: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        timer = Timer(MonotonicClock())
        timer.attach_loop(loop)
        task = timer.schedule(10_000, lambda: None)
        armed = timer.armed_ms
        handle = timer._handle
        for _ in range(100):
            timer.add(task)  # a heartbeat moving the member's only deadline
        assert timer.size == 1
        assert timer._handle is handle  # not disarmed and re-armed on every move
        assert timer.armed_ms == armed
        task.cancel()
        assert _idle(loop, timer)

    _run(loop_name, main)
