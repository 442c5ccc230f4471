"""The memory pool for requests being received (`queued.max.request.bytes`): accounting only, sans-io.

Like Kafka's MemoryPool, a connection asks for a request's whole size once the size prefix is read,
and reads the body only once granted; bytes already in memory (frames waiting their turn, a few
bytes read before the size was known) are charged unconditionally. Nothing is allocated here: the
receiver allocates as bytes arrive, so an announced 100 MB frame costs memory only when sent.

A request that does not fit waits, first come first served. So that waiting connections cannot
deadlock each other, the head of the queue is granted anyway when everything in use belongs to
waiters (nobody else will give memory back); Kafka's non-strict pool lets one request overshoot too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Waiter:
    need: int  # bytes still to grant
    held: int  # bytes the waiter has charged already (part of `used`)
    granted: Callable[[], None]


class MemoryPool:
    """Bytes of partly received and queued requests; a limit below 0 means unbounded (Kafka's -1)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.peak = 0  # highest `used` since the owner last lowered it (see broker.heap)
        self._waiters: OrderedDict[object, _Waiter] = OrderedDict()
        self._waiters_held = 0

    @property
    def bounded(self) -> bool:
        return self.limit >= 0

    @property
    def available(self) -> int:
        """Bytes that may still be read before requests must wait (may be negative after an overshoot)."""
        return self.limit - self.used if self.bounded else 1 << 62

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def charge(self, size: int) -> None:
        """Account bytes already in memory (they cannot be refused)."""
        self.used += size
        if self.used > self.peak:
            self.peak = self.used

    def release(self, size: int) -> None:
        self.used -= size
        if self._waiters:
            self._wake()

    def reserve(self, key: object, need: int, held: int, granted: Callable[[], None]) -> bool:
        """Grant `need` more bytes now (True), or queue `key` and call `granted()` once they fit.

        `held` is what the caller has already charged for this request (counted as waiting memory).
        """
        if not self._waiters and self._fits(need):
            self.charge(need)
            return True
        self._waiters[key] = _Waiter(need, held, granted)
        self._waiters_held += held
        self._wake()
        return False

    def cancel(self, key: object) -> None:
        """Forget a waiter (its connection closed); the caller releases what it had charged."""
        waiter = self._waiters.pop(key, None)
        if waiter is not None:
            self._waiters_held -= waiter.held
            self._wake()

    def _fits(self, need: int) -> bool:
        return not self.bounded or self.used + need <= self.limit or self.used <= self._waiters_held

    def _wake(self) -> None:
        # Grant in arrival order while the head fits; callbacks only resume reading (no re-entry here).
        granted: list[Callable[[], None]] = []
        while self._waiters:
            key, head = next(iter(self._waiters.items()))
            if not self._fits(head.need):
                break
            del self._waiters[key]
            self._waiters_held -= head.held
            self.charge(head.need)
            granted.append(head.granted)
        for callback in granted:
            callback()
