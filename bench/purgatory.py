"""Benchmark the purgatory's timing wheel against loop.call_later (uvloop, asyncio) and a heapq timer.

Three measurements, all in this one process, reported as ratios:
  (a) add + cancel throughput on an idle timer;
  (b) the heartbeat pattern: N pending deadlines (6-45 s, like session timeouts), each re-armed
      (cancel + add) in random order, N = 10k, 100k, 1M;
  (c) bytes per pending operation (tracemalloc).
Work runs inside a running event loop in chunks of 1000 operations with a yield to the loop between
chunks, so each contender's housekeeping (asyncio's heap clean-up, the wheel's bucket expiry) is paid.

Usage: python bench/purgatory.py [--sizes 10000,100000,1000000] [--rounds 3] [--no-gc]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import itertools
import platform
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkito.purgatory import DelayedOperation, MonotonicClock, Purgatory, Timer, TimerTask

CHUNK = 1_000
MIN_OPS_PER_RUN = 300_000  # small N are re-armed in several passes so each timing is long enough
GC_DURING_TIMING = True


def noop() -> None:
    pass


class HeapTimer:
    """The textbook baseline: a heapq of [deadline, seq, callback] with lazy deletion and compaction."""

    def __init__(self) -> None:
        self.heap: list[list[Any]] = []
        self.seq = itertools.count()
        self.cancelled = 0

    def add(self, delay_ms: int, callback: Callable[[], None]) -> list[Any]:
        entry = [time.monotonic_ns() // 1_000_000 + delay_ms, next(self.seq), callback]
        heapq.heappush(self.heap, entry)
        return entry

    def cancel(self, entry: list[Any]) -> None:
        if entry[2] is not None:
            entry[2] = None
            self.cancelled += 1
            if self.cancelled > 100 and self.cancelled * 2 > len(self.heap):  # as asyncio does
                self.heap = [e for e in self.heap if e[2] is not None]
                heapq.heapify(self.heap)
                self.cancelled = 0


class Heartbeat(DelayedOperation):
    """A session deadline as the coordinator holds it: completed by the next heartbeat, else expires."""

    __slots__ = ("beaten",)

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.beaten = False

    def try_complete(self) -> bool:
        return self.force_complete() if self.beaten else False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        pass


# --- contenders: fill N pending, re-arm one, add + cancel one, drain (cancel all, keep objects) -------------


class Contender:
    """`delays_ms`: the deadlines `fill` makes pending; `pool_ms`: delays for `add_cancel(i)`, i < len."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        self.loop = loop
        self.delays_ms = delays_ms
        self.pool_ms = pool_ms

    def fill(self) -> None:
        raise NotImplementedError

    def rearm(self, i: int) -> None:
        raise NotImplementedError

    def add_cancel(self, i: int) -> None:
        raise NotImplementedError

    def drain(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.drain()


class CallLater(Contender):
    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        super().__init__(loop, delays_ms, pool_ms)
        self.delays_s = [d / 1000 for d in delays_ms]
        self.pool_s = [d / 1000 for d in pool_ms]
        self.handles: list[asyncio.TimerHandle] = []

    def fill(self) -> None:
        self.handles = [self.loop.call_later(d, noop) for d in self.delays_s]

    def rearm(self, i: int) -> None:
        self.handles[i].cancel()
        self.handles[i] = self.loop.call_later(self.delays_s[i], noop)

    def add_cancel(self, i: int) -> None:
        self.loop.call_later(self.pool_s[i], noop).cancel()

    def drain(self) -> None:
        for h in self.handles:
            h.cancel()


class WheelNewTask(Contender):
    """`Timer.schedule` + `TimerTask.cancel`: a new task object per re-arm, like call_later's handle."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        super().__init__(loop, delays_ms, pool_ms)
        self.timer = Timer(MonotonicClock())
        self.timer.attach_loop(loop)
        self.tasks: list[TimerTask] = []

    def fill(self) -> None:
        self.tasks = [self.timer.schedule(d, noop) for d in self.delays_ms]

    def rearm(self, i: int) -> None:
        self.tasks[i].cancel()
        self.tasks[i] = self.timer.schedule(self.delays_ms[i], noop)

    def add_cancel(self, i: int) -> None:
        self.timer.schedule(self.pool_ms[i], noop).cancel()

    def drain(self) -> None:
        for t in self.tasks:
            t.cancel()

    def close(self) -> None:
        self.drain()
        self.timer.close()


class WheelReAdd(WheelNewTask):
    """`TimerTask.cancel` + `Timer.add` of the same task: no allocation per re-arm."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        super().__init__(loop, delays_ms, pool_ms)
        self.spare = [self.timer.schedule(d, noop) for d in pool_ms]
        for task in self.spare:
            task.cancel()

    def rearm(self, i: int) -> None:
        task = self.tasks[i]
        task.cancel()
        self.timer.add(task)

    def add_cancel(self, i: int) -> None:
        task = self.spare[i]
        self.timer.add(task)
        task.cancel()


class PurgatoryHeartbeat(Contender):
    """Kafka's completeAndScheduleNextExpiration with a new op: complete the old by key, watch anew."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        super().__init__(loop, delays_ms, pool_ms)
        self.timer = Timer(MonotonicClock())
        self.timer.attach_loop(loop)
        self.purgatory: Purgatory[Heartbeat] = Purgatory("heartbeat", self.timer)
        self.ops: list[Heartbeat] = []

    def fill(self) -> None:
        self.ops = [Heartbeat(d) for d in self.delays_ms]
        for i, op in enumerate(self.ops):
            self.purgatory.try_complete_else_watch(op, (i,))

    def rearm(self, i: int) -> None:
        self.ops[i].beaten = True
        self.purgatory.check_and_complete(i)
        op = self.ops[i] = Heartbeat(self.delays_ms[i])
        self.purgatory.try_complete_else_watch(op, (i,))

    def add_cancel(self, i: int) -> None:
        op = Heartbeat(self.pool_ms[i])
        self.purgatory.try_complete_else_watch(op, (-1 - i,))
        op.force_complete()

    def drain(self) -> None:
        for op in self.ops:
            op.force_complete()
        self.purgatory.purge_completed()

    def close(self) -> None:
        self.drain()
        self.timer.close()


class HeapqTimer(Contender):
    def __init__(self, loop: asyncio.AbstractEventLoop, delays_ms: list[int], pool_ms: list[int]) -> None:
        super().__init__(loop, delays_ms, pool_ms)
        self.heap = HeapTimer()
        self.entries: list[list[Any]] = []

    def fill(self) -> None:
        self.entries = [self.heap.add(d, noop) for d in self.delays_ms]

    def rearm(self, i: int) -> None:
        self.heap.cancel(self.entries[i])
        self.entries[i] = self.heap.add(self.delays_ms[i], noop)

    def add_cancel(self, i: int) -> None:
        self.heap.cancel(self.heap.add(self.pool_ms[i], noop))

    def drain(self) -> None:
        for e in self.entries:
            self.heap.cancel(e)


CONTENDERS: list[tuple[str, type[Contender], Callable[[], asyncio.AbstractEventLoop]]] = [
    ("wheel: cancel + schedule (new task)", WheelNewTask, uvloop.new_event_loop),
    ("wheel: cancel + add (same task)", WheelReAdd, uvloop.new_event_loop),
    ("purgatory: an operation watched on one key", PurgatoryHeartbeat, uvloop.new_event_loop),
    ("uvloop: handle.cancel + call_later", CallLater, uvloop.new_event_loop),
    ("asyncio: handle.cancel + call_later", CallLater, asyncio.new_event_loop),
    ("heapq: lazy cancel + heappush", HeapqTimer, asyncio.new_event_loop),
]


def run_in_loop(factory: Callable[[], asyncio.AbstractEventLoop], main: Coroutine[Any, Any, Any]) -> Any:
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


async def timed(order: list[int], op: Callable[[int], None], total: int) -> float:
    """Seconds to apply `op` to `total` indices taken from `order` cyclically, yielding every chunk."""
    gc.collect()
    if not GC_DURING_TIMING:
        gc.disable()
    n = len(order)
    done = 0
    start = time.perf_counter()
    while done < total:
        for j in range(done, min(done + CHUNK, total)):
            op(order[j % n])
        done += CHUNK
        await asyncio.sleep(0)
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed


def best_of_rounds(
    label: str, rounds: int, measure: Callable[[type[Contender]], Coroutine[Any, Any, float]]
) -> dict[str, float]:
    """Best result per contender over `rounds`; each round runs every contender once, on fresh state.

    Rounds go across contenders (not repeats of one contender back to back) so that a burst of load
    from elsewhere on a shared machine does not land on a single contender.
    """
    results: dict[str, float] = {}
    for r in range(rounds):
        for name, cls, factory in CONTENDERS:
            ns = run_in_loop(factory, measure(cls))
            gc.collect()
            results[name] = min(ns, results.get(name, ns))
            print(f"  {label} round {r + 1}/{rounds}  {name:<58} {ns:8.0f} ns", file=sys.stderr)
    return results


def bench_rearm(n: int, rounds: int, seed: int) -> dict[str, float]:
    """ns per re-arm with `n` deadlines pending, best of `rounds`."""
    rng = random.Random(seed)
    delays = [rng.randint(6_000, 45_000) for _ in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    total = max(n, MIN_OPS_PER_RUN)

    async def measure(cls: type[Contender]) -> float:
        contender = cls(asyncio.get_running_loop(), delays, [])
        contender.fill()
        elapsed = await timed(order, contender.rearm, total)
        contender.close()
        return elapsed / total * 1e9

    return best_of_rounds(f"rearm N={n:,}", rounds if n < 1_000_000 else min(rounds, 2), measure)


def bench_add_cancel(ops: int, background: int, rounds: int, seed: int) -> dict[str, float]:
    """ns per add + cancel with `background` other deadlines pending (delays from a 1000-slot pool)."""
    rng = random.Random(seed)
    pool = [rng.randint(6_000, 45_000) for _ in range(1_000)]
    pending = [rng.randint(6_000, 45_000) for _ in range(background)]
    order = list(range(len(pool)))

    async def measure(cls: type[Contender]) -> float:
        contender = cls(asyncio.get_running_loop(), pending, pool)
        contender.fill()
        elapsed = await timed(order, contender.add_cancel, ops)
        contender.close()
        return elapsed / ops * 1e9

    return best_of_rounds(f"add+cancel, {background:,} pending", rounds, measure)


def bench_memory(n: int, seed: int) -> dict[str, float]:
    """Bytes per pending operation (tracemalloc: everything allocated while filling, divided by n)."""
    rng = random.Random(seed)
    delays = [rng.randint(6_000, 45_000) for _ in range(n)]
    results: dict[str, float] = {}
    for name, cls, factory in CONTENDERS:
        if cls is WheelReAdd:
            continue  # same objects as the new-task variant

        async def main(cls: type[Contender] = cls) -> float:
            contender = cls(asyncio.get_running_loop(), delays, [])
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            contender.fill()
            after = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            contender.close()
            return (after - before) / n

        results[name] = run_in_loop(factory, main())
        print(f"  memory N={n:,}  {name:<58} {results[name]:8.0f} B", file=sys.stderr)
    return results


def markdown(
    sizes: list[int],
    rearm: dict[int, dict[str, float]],
    add_cancel: dict[int, dict[str, float]],
    memory: dict[str, float],
    memory_n: int,
) -> str:
    names = [name for name, _, _ in CONTENDERS]
    uv, aio = "uvloop: handle.cancel + call_later", "asyncio: handle.cancel + call_later"

    def cell(ns: float, row: dict[str, float]) -> str:
        return f"{ns:,.0f} ({row[uv] / ns:.2f}x / {row[aio] / ns:.2f}x)"

    lines = [
        "(b) heartbeat re-arm, ns per re-arm (speed-up vs uvloop / vs asyncio `call_later`):",
        "",
        "| contender | " + " | ".join(f"N = {n:,}" for n in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    lines += [
        f"| {name} | " + " | ".join(cell(rearm[n][name], rearm[n]) for n in sizes) + " |" for name in names
    ]
    backgrounds = sorted(add_cancel)
    lines += [
        "",
        "(a) add + cancel, ns per pair (speed-up vs uvloop / vs asyncio):",
        "",
        "| contender | " + " | ".join(f"{b:,} other deadlines pending" for b in backgrounds) + " |",
        "|---|" + "---|" * len(backgrounds),
    ]
    lines += [
        f"| {name} | " + " | ".join(cell(add_cancel[b][name], add_cancel[b]) for b in backgrounds) + " |"
        for name in names
    ]
    lines += [
        "",
        f"(c) bytes per pending operation, tracemalloc, N = {memory_n:,}:",
        "",
        "| contender | bytes | vs uvloop | vs asyncio |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {b:,.0f} | {b / memory[uv]:.2f}x | {b / memory[aio]:.2f}x |"
        for name, b in memory.items()
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=3, help="best of; 2 at most for N >= 1M")
    parser.add_argument("--add-cancel-ops", type=int, default=200_000)
    parser.add_argument("--memory-n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-gc", action="store_true", help="disable the cyclic GC while timing")
    args = parser.parse_args()
    global GC_DURING_TIMING
    GC_DURING_TIMING = not args.no_gc
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"python {platform.python_version()}, uvloop {uvloop.__version__}, {platform.machine()}",
        file=sys.stderr,
    )
    started = time.perf_counter()
    print("cyclic GC during timing:", "off" if args.no_gc else "on (default)", file=sys.stderr)
    add_cancel = {b: bench_add_cancel(args.add_cancel_ops, b, args.rounds, args.seed) for b in (0, 10_000)}
    rearm = {n: bench_rearm(n, args.rounds, args.seed) for n in sizes}
    memory = bench_memory(args.memory_n, args.seed)
    print(markdown(sizes, rearm, add_cancel, memory, args.memory_n))
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
