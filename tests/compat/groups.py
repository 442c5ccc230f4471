"""Waiting on groups of consumers: stable assignments, records consumed."""

from __future__ import annotations

from collections.abc import Sequence

from tests.compat.clients.base import Consumer, wait_for_consumers
from tests.compat.records import Got, Rec


def balanced(members: Sequence[Consumer], partitions: int) -> bool:
    """Every member has an assignment of the latest generation: together they own every partition
    once, and each has its fair share (what both range and round robin give)."""
    owned = [m.feed.assignment for m in members]
    if any(a is None for a in owned):
        return False
    sizes = sorted(len(a) for a in owned if a is not None)
    union = frozenset().union(*[a for a in owned if a is not None])
    fair = {partitions // len(members), -(-partitions // len(members))}
    return union == frozenset(range(partitions)) and sum(sizes) == partitions and set(sizes) <= fair


def wait_balanced(members: Sequence[Consumer], partitions: int, what: str = "") -> None:
    names = ", ".join(m.name for m in members)
    wait_for_consumers(
        lambda: balanced(members, partitions), what or f"{partitions} partitions shared by {names}", members
    )


def consumed(consumers: Sequence[Consumer]) -> list[Got]:
    return [g for c in consumers for g in c.feed.records]


def wait_consumed(consumers: Sequence[Consumer], sent: Sequence[Rec], what: str = "") -> None:
    want = {r.value for r in sent}

    def done() -> bool:
        return want <= {g.value for g in consumed(consumers)}

    wait_for_consumers(done, what or f"{len(want)} records consumed", consumers)


def stop_all(consumers: Sequence[Consumer]) -> None:
    """Stop every consumer (in parallel is not needed: each stop is a graceful leave)."""
    errors = []
    for c in consumers:
        try:
            c.stop()
        except AssertionError as exc:
            errors.append(str(exc))
    assert not errors, "\n".join(errors)
