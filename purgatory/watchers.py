"""The purgatory: delayed operations watched by key, completed by events or expired by the timer."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

from kafkito.purgatory.operation import DelayedOperation
from kafkito.purgatory.timer import Timer

T = TypeVar("T", bound=DelayedOperation)


class Purgatory(Generic[T]):
    """Operations waiting on keys (a group id, a partition) until an event completes them or they time out.

    Counters, all plain ints: `pending` (not yet completed), `num_watched`/`watched()` (entries in the
    watcher lists, completed ones included until purged), `completions` (completed before their
    timeout), `expirations` (completed by their timeout). Completed operations are dropped from the
    watcher lists by `check_and_complete` on their key, and by a purge of all lists once more than
    `max(purge_interval, pending)` operations completed since the last purge, so memory follows the
    live operations at amortised O(1) cost per operation.
    """

    __slots__ = (
        "_finished_since_purge",
        "_num_watched",
        "_timer",
        "_watchers",
        "completions",
        "expirations",
        "name",
        "pending",
        "purge_interval",
        "purges",
    )

    def __init__(self, name: str, timer: Timer, purge_interval: int = 1000) -> None:
        self.name = name
        self.purge_interval = purge_interval
        self._timer = timer
        self._watchers: dict[Hashable, list[T]] = {}
        self._num_watched = 0
        self._finished_since_purge = 0
        self.pending = 0
        self.completions = 0
        self.expirations = 0
        self.purges = 0

    def __repr__(self) -> str:
        return (
            f"Purgatory({self.name!r}, pending={self.pending}, watched={self._num_watched}, "
            f"completions={self.completions}, expirations={self.expirations})"
        )

    @property
    def num_watched(self) -> int:
        return self._num_watched

    def watched(self) -> int:
        """Entries in the watcher lists (an operation counts once per key it watches)."""
        return self._num_watched

    @property
    def num_keys(self) -> int:
        return len(self._watchers)

    def try_complete_else_watch(self, op: T, keys: Iterable[Hashable]) -> bool:
        """Try to complete `op`; else watch it on every key, try again, and arm its timeout.

        Returns True if `op` completed during this call. The second try closes the window in which an
        event for one of the keys (raised by the first try itself) found the operation not yet watched.
        """
        if op._completed:
            return True
        if op._purgatory is not None:
            raise ValueError(f"{op!r} is already in purgatory {op._purgatory.name!r}")
        op.try_complete()
        if op._completed:
            self.completions += 1
            return True
        op._purgatory = self
        self.pending += 1
        watchers = self._watchers
        for key in keys:
            ops = watchers.get(key)
            if ops is None:
                watchers[key] = [op]
            else:
                ops.append(op)
            self._num_watched += 1
        op.try_complete()
        if op._completed:
            return True
        self._timer.add(op)
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Something changed for `key`: try every operation watching it; returns how many completed."""
        ops = self._watchers.pop(key, None)
        if ops is None:
            return 0
        completed = 0
        survivors: list[T] = []
        for op in ops:
            if op._completed:
                continue
            if op.try_complete():
                completed += 1
            elif not op._completed:
                survivors.append(op)
        self._num_watched -= len(ops) - len(survivors)
        # Operations watched on this key while we were trying (by a callback) went into a fresh list.
        added = self._watchers.get(key)
        if survivors:
            if added:
                survivors.extend(added)
            self._watchers[key] = survivors
        return completed

    def _finished(self, expired: bool) -> None:
        self.pending -= 1
        if expired:
            self.expirations += 1
        else:
            self.completions += 1
        self._finished_since_purge += 1
        if self._finished_since_purge > self.purge_interval and self._finished_since_purge > self.pending:
            self.purge_completed()

    def purge_completed(self) -> int:
        """Drop completed operations from all watcher lists, forget empty keys; returns entries removed."""
        self._finished_since_purge = 0
        self.purges += 1
        removed = 0
        empty: list[Hashable] = []
        for key, ops in self._watchers.items():
            live = [op for op in ops if not op._completed]
            if len(live) != len(ops):
                removed += len(ops) - len(live)
                if live:
                    ops[:] = live
                else:
                    empty.append(key)
        for key in empty:
            del self._watchers[key]
        self._num_watched -= removed
        return removed
