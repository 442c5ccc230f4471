"""Waiting in a test for something another thread, process or broker does: one poll loop."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEADLINE_S = 60.0  # a safety net against a hang on a busy machine, never a performance threshold
POLL_S = 0.02


def wait_until(
    condition: Callable[[], T],
    timeout: float = DEADLINE_S,
    what: str = "the condition",
    *,
    detail: Callable[[], str] | None = None,
    poll: float = POLL_S,
) -> T:
    """Call `condition` until it returns something truthy, and return that. After `timeout` seconds
    fail with `what` (and `detail()`, the state worth seeing). `condition` may raise to fail early."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            extra = f"\n  {detail()}" if detail is not None else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{extra}")
        time.sleep(poll)
    return result
