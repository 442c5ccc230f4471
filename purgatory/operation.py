"""Delayed operations: work completed once, by an event (`force_complete`) or by its timeout."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from kafkito.purgatory.timer import TimerTask

if TYPE_CHECKING:
    from kafkito.purgatory.watchers import Purgatory


class DelayedOperation(TimerTask):
    """An operation with a deadline: `on_complete` runs exactly once, whoever gets there first.

    Subclasses implement `try_complete` (check the condition; if met, return `force_complete()`),
    `on_complete` (the real work, also run on timeout) and `on_expiration` (what a timeout adds,
    run after `on_complete`).
    """

    __slots__ = ("_completed", "_purgatory")

    def __init__(self, delay_ms: int) -> None:
        TimerTask.__init__(self, delay_ms)
        self._completed = False
        self._purgatory: Purgatory[Any] | None = None

    @property
    def is_completed(self) -> bool:
        return self._completed

    def force_complete(self) -> bool:
        """Complete now unless already done: cancel the timeout, run `on_complete`; True if this call won."""
        return self._finish(expired=False)

    def run(self) -> None:
        if self._finish(expired=True):
            self.on_expiration()

    def _finish(self, expired: bool) -> bool:
        if self._completed:
            return False
        self._completed = True
        self.cancel()
        purgatory = self._purgatory
        if purgatory is not None:
            purgatory._finished(expired)
        self.on_complete()
        return True

    @abstractmethod
    def try_complete(self) -> bool:
        """Check whether the operation can complete; if so return `self.force_complete()`, else False."""

    @abstractmethod
    def on_complete(self) -> None:
        """The operation's result; runs exactly once, on completion or on timeout."""

    @abstractmethod
    def on_expiration(self) -> None:
        """Extra work on timeout, run after `on_complete`."""
