"""Log rate limits: a token bucket per event name, so that a flood of bad requests cannot flood the log.

Only warning and error events are limited: the ones a client can cause (a closed connection, a failed
request, a storage error) at whatever rate it sends. Each event name may log `burst` lines at once,
then `rate` lines per second. The first line let through after some were dropped carries how many
(`suppressed=N`), so nothing is silently lost from the record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from typing import Any

import structlog

_LIMITED_METHODS = frozenset(("warning", "warn", "error", "exception", "critical", "fatal"))


class TokenBuckets:
    """One token bucket per key, driven by an injected clock (seconds)."""

    __slots__ = ("_buckets", "_burst", "_clock", "_rate")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, list[float]] = {}  # key -> [tokens, last refill time, dropped since]

    def take(self, key: str) -> int | None:
        """None if `key` is over its budget (the event is dropped), else how many were dropped before it."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [self._burst, now, 0.0]
        tokens = min(self._burst, bucket[0] + (now - bucket[1]) * self._rate)
        bucket[1] = now
        if tokens < 1.0:
            bucket[0] = tokens
            bucket[2] += 1
            return None
        bucket[0] = tokens - 1.0
        dropped = int(bucket[2])
        bucket[2] = 0.0
        return dropped


# A burst of 20 lines per event name, then 2 a second: a client sending garbage as fast as it can costs
# the log a couple of lines a second, not one per request.
BUCKETS = TokenBuckets(rate=2.0, burst=20)


def rate_limit(
    _logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: drop warning/error events over their event name's budget."""
    if method_name not in _LIMITED_METHODS:
        return event_dict
    dropped = BUCKETS.take(str(event_dict.get("event")))
    if dropped is None:
        raise structlog.DropEvent
    if dropped:
        event_dict["suppressed"] = dropped
    return event_dict
