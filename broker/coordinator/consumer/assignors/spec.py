"""The assignor contract: what a server-side assignor is given (members, topics) and what it returns.

An assignment is `Mapping[uuid.UUID, frozenset[int]]`: topic id -> partition numbers. Assignors are
pure functions of their input: no coordinator state, no clock, the same input gives the same output.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import NamedTuple, Protocol

Assignment = Mapping[uuid.UUID, frozenset[int]]
GroupAssignment = dict[str, dict[uuid.UUID, frozenset[int]]]


class MemberSpec(NamedTuple):
    """One member as an assignor sees it."""

    subscribed_topic_ids: frozenset[uuid.UUID]
    rack_id: str | None
    instance_id: str | None
    assigned: Assignment  # the member's current TARGET assignment (for stickiness)


class TopicSpec(NamedTuple):
    """One topic as an assignor sees it."""

    topic_id: uuid.UUID
    name: str
    num_partitions: int
    partition_racks: Mapping[int, frozenset[str]]  # may be empty (one broker: no racks)


class Assignor(Protocol):
    """A server-side assignor (Kafka's ConsumerGroupPartitionAssignor).

    Every member of `members` is in the result (maybe with `{}`); a partition is in at most one
    member's assignment; partitions of topics nobody subscribes to are not assigned; a subscription
    to a topic id missing from `topics` is ignored. A member's assignment lists only topics it gets
    partitions of (no empty sets).
    """

    name: str

    def assign(
        self, members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec]
    ) -> GroupAssignment: ...


class AssignorError(Exception):
    """An assignor could not compute an assignment (an internal inconsistency, never a client's input)."""
