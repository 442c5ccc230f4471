"""A log-line rate limiter: one line per key per interval, counting the lines it held back."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

MAX_KEYS = 1024  # a flood of distinct keys must not grow memory without bound


class LogLimiter:
    """Lets the first line of each key through, then at most one every `interval_s` seconds.

    `allow(key)` answers None for a line to drop, else how many lines of that key were dropped
    since the last one let through (to be logged with it, so nothing is silently lost).
    """

    def __init__(self, interval_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last: dict[Hashable, float] = {}
        self._held: dict[Hashable, int] = {}

    def allow(self, key: Hashable) -> int | None:
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval_s:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        if last is None and len(self._last) >= MAX_KEYS:
            self._last.clear()
            self._held.clear()
        self._last[key] = now
        return self._held.pop(key, 0)
