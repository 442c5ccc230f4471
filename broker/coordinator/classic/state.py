"""The classic group state machine: every state, what it means, and the transitions that leave it.

This module is the one place the states and their legal transitions are defined; `ClassicGroup`
enforces them on every `transition_to`.

- **Empty**: no members (a new group, or all left or timed out). Offsets may still be committed by
  non-members (generation -1). Leaves to PreparingRebalance when the first member joins, or to Dead
  when the group is deleted, unloaded, or loses its last offset to expiry.
- **PreparingRebalance**: a join phase is open; members must (re)send JoinGroup before the
  DelayedJoin completes (all joined, or the rebalance timeout; an Empty group first waits
  `group.initial.rebalance.delay.ms`). Leaves to CompletingRebalance when the phase completes with
  members, to Empty when it completes with none, or to Dead.
- **CompletingRebalance**: the generation is formed and JoinGroup answered; the group waits for the
  leader's SyncGroup with the assignment. Leaves to Stable once the assignment is written, or back to
  PreparingRebalance (a member joins, leaves, times out, changes metadata, or never syncs), or to Dead.
- **Stable**: the assignment is written and served to members' SyncGroups; members heartbeat. Leaves
  to PreparingRebalance on any membership change (join, leave, expiry, the leader rejoining), or to Dead.
- **Dead**: the group is gone (deleted, unloaded, expired); the object only answers stragglers and is
  no longer in the coordinator. No transition leaves it.
"""

from __future__ import annotations

from enum import StrEnum


class GroupState(StrEnum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


# Target state -> the states it may be entered from.
VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
}

# States in which the join phase is over (members sync, or already synced).
AFTER_JOIN = (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)
# States in which no sync is expected any more.
REBALANCING_OR_DONE = (GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE)


class IllegalGroupStateError(RuntimeError):
    """A transition or operation the state machine forbids: a coordinator bug, never a client error."""
