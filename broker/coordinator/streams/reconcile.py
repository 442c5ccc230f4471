"""Reconciliation (Kafka's streams CurrentAssignmentBuilder): move one member towards its target.

A member first revokes what it must give up (it keeps its epoch until its heartbeat's owned tasks no
longer hold them); only then does it move to the target epoch and get new tasks, and of those only
the ones that are released: an active task nobody else runs, and no other member of its process
holds as a standby or warm-up; a standby or warm-up task that no member of its process holds in any
role. The rest come on a later heartbeat (UNRELEASED_TASKS). Pure: the caller writes the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkito.broker.coordinator.streams.member import MemberState, StreamsGroupMember
from kafkito.broker.coordinator.streams.tasks import Task, TaskMap, TaskSet

IsUnreleased = Callable[[Task], bool]


class FencedMember(Exception):
    """The member must give up everything and rejoin (FENCED_MEMBER_EPOCH)."""


class Reconciled(NamedTuple):
    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned: TaskSet
    pending_revocation: TaskSet


class Unreleased(NamedTuple):
    """Whether a task the member should get is still held elsewhere, per role."""

    active: IsUnreleased
    standby: IsUnreleased
    warmup: IsUnreleased


def current_of(member: StreamsGroupMember) -> Reconciled:
    return Reconciled(
        member.member_epoch,
        member.previous_member_epoch,
        member.state,
        member.assigned,
        member.pending_revocation,
    )


def reconcile(
    member: StreamsGroupMember,
    target_epoch: int,
    target: TaskSet,
    unreleased: Unreleased,
    owned: TaskSet | None,
) -> Reconciled:
    """The member's next current assignment (its current one when it cannot move on yet). `owned`
    None: the heartbeat did not say what the member owns (unchanged since its last one)."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, target_epoch, target, unreleased, owned)
        return current_of(member)
    if state is MemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(member.pending_revocation):
            return current_of(member)
        return _next(member, target_epoch, target, unreleased, owned)
    if state is MemberState.UNRELEASED_TASKS:
        return _next(member, target_epoch, target, unreleased, owned)
    if owned is None or not owned.is_empty():
        raise FencedMember(
            "The streams group member is in a unknown state. "
            "The member must abandon all its tasks and rejoin."
        )
    return _next(member, target_epoch, target, unreleased, owned)


_Difference = tuple[TaskMap, TaskMap, TaskMap, bool]
"""(kept, to revoke, to add now, some still unreleased)"""


def _difference(current: TaskMap, wanted: TaskMap, is_unreleased: IsUnreleased) -> _Difference:
    kept: TaskMap = {}
    revoking: TaskMap = {}
    adding: TaskMap = {}
    blocked = False
    for subtopology in current.keys() | wanted.keys():
        have = current.get(subtopology, frozenset())
        want = wanted.get(subtopology, frozenset())
        if both := have & want:
            kept[subtopology] = both
        if gone := have - want:
            revoking[subtopology] = gone
        new = want - have
        free = frozenset(p for p in new if not is_unreleased((subtopology, p)))
        if free:
            adding[subtopology] = free
        if len(free) != len(new):
            blocked = True
    return kept, revoking, adding, blocked


def _next(
    member: StreamsGroupMember,
    target_epoch: int,
    target: TaskSet,
    unreleased: Unreleased,
    owned: TaskSet | None,
) -> Reconciled:
    current = member.assigned
    a_kept, a_rev, a_add, a_blocked = _difference(current.active, target.active, unreleased.active)
    s_kept, s_rev, s_add, s_blocked = _difference(current.standby, target.standby, unreleased.standby)
    w_kept, w_rev, w_add, w_blocked = _difference(current.warmup, target.warmup, unreleased.warmup)
    kept = TaskSet(a_kept, s_kept, w_kept)
    revoking = TaskSet(a_rev, s_rev, w_rev)
    adding = TaskSet(a_add, s_add, w_add)
    blocked = a_blocked or s_blocked or w_blocked
    if not revoking.is_empty() and (owned is None or owned.contains_any(revoking)):
        # Revoke first: the member keeps its epoch and only what it retains.
        return Reconciled(
            member.member_epoch, member.member_epoch, MemberState.UNREVOKED_TASKS, kept, revoking
        )
    state = MemberState.UNRELEASED_TASKS if blocked else MemberState.STABLE
    return Reconciled(target_epoch, member.member_epoch, state, kept.merge(adding), TaskSet.empty())
