"""The coordinator's one re-entrancy mechanism: answers queue up while it changes state, then go out.

Every way into the coordinator (a request, a timer firing, an append completing) is an *entry*.
Callbacks queued by `send` inside an entry run, in order, when the outermost entry returns, so a
callback never observes (or re-enters) the coordinator mid-change.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import structlog

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

log = structlog.get_logger("kafkito.coordinator")


class Outbox:
    """Queued callbacks and the entry depth. `enter`/`leave` bracket an entry (`leave` flushes)."""

    __slots__ = ("_flushing", "_queue", "depth")

    def __init__(self) -> None:
        self._queue: deque[tuple[Callable[[Any], None], Any]] = deque()
        self.depth = 0
        self._flushing = False

    def send(self, callback: Callable[[T], None], result: T) -> None:
        """Queue `callback(result)` for when the outermost entry returns."""
        self._queue.append((callback, result))

    def enter(self) -> None:
        self.depth += 1

    def leave(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self._queue:
            self._flush()

    def guard(self, callback: Callable[[T], None]) -> Callable[[T], None]:
        """`callback` made an entry of its own (for answers that arrive later, such as appends)."""

        def guarded(value: T) -> None:
            self.depth += 1
            try:
                callback(value)
            finally:
                self.leave()

        return guarded

    def _flush(self) -> None:
        if self._flushing:
            return
        self._flushing = True
        try:
            queue = self._queue
            while queue:
                callback, result = queue.popleft()
                try:
                    callback(result)
                except Exception:
                    log.exception("coordinator.callback_failed", result=repr(result))
        finally:
            self._flushing = False


class HasOutbox(Protocol):
    @property
    def outbox(self) -> Outbox: ...


S = TypeVar("S", bound=HasOutbox)


def entry(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Mark a method as a way into the coordinator (an entry of `self.outbox`)."""

    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        outbox = self.outbox
        outbox.depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            outbox.leave()

    functools.update_wrapper(wrapper, method)
    return wrapper
