"""Running a long load on the event loop a step at a time, so other connections are served meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

Defer = Callable[[Callable[[], None]], Any]
Steps = Generator[None, None, None]


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
        try:
            next(self._steps)
        except StopIteration:
            self._steps = None
            return
        self._defer(self._step)
