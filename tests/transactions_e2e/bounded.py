"""Client calls that may block without a timeout of their own (kafka-python's commit_transaction),
run in a daemon thread so that a test fails with an assertion instead of hanging."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from tests.support.waiting import DEADLINE_S

T = TypeVar("T")


def bounded(call: Callable[[], T], what: str, timeout: float = DEADLINE_S) -> T:
    """Return `call()`'s result or raise its exception; AssertionError if it has not returned after
    `timeout` seconds (the thread is left behind, a daemon: a hung client cannot hang the run)."""
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name=f"bounded: {what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise AssertionError(f"{what} did not return within {timeout:.0f} s")
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]
