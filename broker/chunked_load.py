"""Running a long load on the event loop a step at a time, so other connections are served meanwhile."""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from typing import Any

Defer = Callable[[Callable[[], None]], Any]
Steps = Generator[None, None, None]


def run_step(steps: Steps) -> bool:
    """Run one step of `steps`; False once they are done.

    The cyclic garbage collector is paused during the step: a load allocates hundreds of thousands
    of long-lived tuples (records, offsets), and the collections they would trigger cost a reload
    ~10% of its time without freeing anything. It is on again between steps, for the rest of the
    broker, and collects whatever the step left.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        next(steps)
    except StopIteration:
        return False
    finally:
        if enabled:
            gc.enable()
    return True


def run_all(steps: Steps) -> None:
    """Run `steps` to the end at once (see `run_step`)."""
    while run_step(steps):
        pass


class ChunkedLoad:
    """Drives a generator one step per `defer`red call (the broker passes `loop.call_soon`)."""

    __slots__ = ("_defer", "_steps")

    def __init__(self) -> None:
        self._steps: Steps | None = None
        self._defer: Defer | None = None

    def start(self, steps: Steps, defer: Defer) -> None:
        self._steps = steps
        self._defer = defer
        defer(self._step)

    def stop(self) -> None:
        """Abandon the load in progress, if any (the broker is stopping)."""
        if self._steps is not None:
            self._steps.close()
            self._steps = None

    def _step(self) -> None:
        if self._steps is None or self._defer is None:
            return
        if not run_step(self._steps):
            self._steps = None
            return
        self._defer(self._step)
