"""`Fault`: the test's side of an injected fault rule (what it fired, removing it), thread-safe."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkito.broker.steering import FaultRule
    from kafkito.testing.handle import KafkitoHandle


class Fault:
    """An injected fault rule as the test sees it: `.fired`, `.remaining`, `.remove()`, `.wait_fired()`."""

    __slots__ = ("_handle", "rule")

    def __init__(self, rule: FaultRule, handle: KafkitoHandle) -> None:
        self.rule = rule
        self._handle = handle

    @property
    def id(self) -> int:
        return self.rule.id

    @property
    def fired(self) -> int:
        """How many requests the rule has answered so far."""
        return self.rule.fired

    @property
    def remaining(self) -> int | None:
        """How many more it will answer (None: until removed)."""
        return self.rule.remaining

    @property
    def active(self) -> bool:
        return self.rule.active

    def remove(self) -> None:
        """Stop applying the rule (a no-op once it is used up or removed)."""
        if self._handle.running:
            self._handle.call(self.rule.remove)

    def wait_fired(self, times: int | None = None, timeout: float = 30.0) -> int:
        """Wait until the rule has fired `times` times (default: its whole count, else once)."""
        wanted = times if times is not None else (self.rule.count or 1)
        deadline = time.monotonic() + timeout
        while self.rule.fired < wanted:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"fault {self.rule.api}/{self.rule.error.name} fired {self.rule.fired} "
                    f"of {wanted} times within {timeout} s"
                )
            time.sleep(0.01)  # polling the broker for the condition, not modelling elapsed time
        return self.rule.fired

    def as_dict(self) -> dict[str, Any]:
        return self.rule.as_dict()

    def __repr__(self) -> str:
        return f"<Fault {self.as_dict()}>"
