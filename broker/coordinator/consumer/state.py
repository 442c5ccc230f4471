"""The states of a consumer group and of its members, each with what it means and what leaves it.

A consumer group's state is not stored: it is derived from its epochs and members after every
replayed record (Kafka's design), so it can never disagree with the records.
"""

from __future__ import annotations

from enum import Enum, IntEnum


class ConsumerGroupState(Enum):
    """The group's state; the value is Kafka's name (ListGroups, ConsumerGroupDescribe)."""

    EMPTY = "Empty"
    """No members. Left when a member joins (→ Assigning, as the join bumps the group epoch)."""
    ASSIGNING = "Assigning"
    """The group epoch is ahead of the target assignment epoch: the next heartbeat computes a new
    target assignment (→ Reconciling, or Stable when nobody's assignment changes)."""
    RECONCILING = "Reconciling"
    """The target assignment is current, but some member is not yet at its epoch (or is still
    revoking or waiting for partitions). → Stable when every member has converged; → Assigning when
    the group epoch is bumped again (a join, a leave, a subscription or topic change)."""
    STABLE = "Stable"
    """Every member owns exactly its target assignment at the target epoch. → Assigning on any bump."""
    DEAD = "Dead"
    """The group was deleted (DeleteGroups, or expiry of an empty group); never left."""


class MemberState(IntEnum):
    """A member's reconciliation state; the value is Kafka's byte in the current assignment record."""

    STABLE = 0
    """The member owns its target assignment at the target epoch (or waits for a newer target)."""
    UNREVOKED_PARTITIONS = 1
    """The member must first revoke `pending_revocation`; it stays at its epoch until its
    heartbeat's owned partitions no longer hold them (or the rebalance timeout fences it)."""
    UNRELEASED_PARTITIONS = 2
    """The member is at the target epoch but some of its target partitions are still owned by
    another member that has not revoked them yet; they are given as soon as they are released."""
    UNKNOWN = 127
    """A state from a newer version: the member is fenced unless it rejoins owning nothing."""

    @classmethod
    def of(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN

    @property
    def wire_name(self) -> str:
        return self.name.lower()
