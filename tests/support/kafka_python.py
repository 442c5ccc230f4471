"""Joining a group with kafka-python 3.0.12 without meeting its two join bugs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def subscribe(consumer: Any, topics: Sequence[str], listener: Any = None) -> None:
    """Subscribe, then fetch the metadata before the first poll.

    kafka-python 3.0.12 has two bugs that Kafka's initial rebalance delay (3 s) hides, and these
    tests run groups with no delay. A leader that assigns before it has the topics' metadata assigns
    nothing. A leader whose metadata snapshot changes after it assigned (the snapshot is taken by
    a listener that only sees refreshes made after subscribing) rejoins, and if poll() times out
    during that rejoin the completed join is never applied: no assignment, heartbeats left off, so
    the broker expires the member while it believes it is in the group. A blocking metadata round
    trip after subscribing gives the leader both the partitions and a snapshot that stays put.
    """
    consumer.subscribe(list(topics), listener=listener)
    consumer.topics()
