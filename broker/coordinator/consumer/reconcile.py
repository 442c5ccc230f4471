"""Reconciliation (Kafka's CurrentAssignmentBuilder): move one member towards its target assignment.

The rules, in order: a member first revokes what it must give up, and keeps its epoch until its
heartbeat's owned partitions show they are gone; only then does it move to the target epoch and get
new partitions, and of those only the ones nobody else still holds (the others come on a later
heartbeat, once their previous owner released them: UNRELEASED_PARTITIONS). A member never keeps or
gets a partition of a topic it no longer subscribes to (by name, or through its regex as resolved so
far): when its subscription changed, those are revoked at once, even before a new target exists.
Pure: it computes the member's next current assignment, which the caller writes as a record.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import NamedTuple

from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember, PartitionMap
from kafkito.broker.coordinator.consumer.requests import OwnedPartitions
from kafkito.broker.coordinator.consumer.state import MemberState

IsFree = Callable[[uuid.UUID, int], bool]
"""Whether a partition may be given to the member (nobody else holds it)."""
Subscribed = Callable[[], frozenset[uuid.UUID]]
"""The ids of the topics the member subscribes to now (asked only when needed)."""


class FencedMember(Exception):
    """The member must give up everything and rejoin (FENCED_MEMBER_EPOCH)."""


class Reconciled(NamedTuple):
    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned: PartitionMap
    pending_revocation: PartitionMap


def current_of(member: ConsumerGroupMember) -> Reconciled:
    return Reconciled(
        member.member_epoch,
        member.previous_member_epoch,
        member.state,
        member.assigned,
        member.pending_revocation,
    )


def owns_any(pending: PartitionMap, owned: OwnedPartitions | None) -> bool:
    """Whether the member still reports owning one of `pending` (unknown ownership counts as yes)."""
    if owned is None:
        return True
    for topic_id, partitions in owned:
        revoking = pending.get(topic_id)
        if revoking and not revoking.isdisjoint(partitions):
            return True
    return False


def reconcile(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: PartitionMap,
    is_free: IsFree,
    owned: OwnedPartitions | None,
    subscribed: Subscribed | None = None,
    subscription_changed: bool = False,
) -> Reconciled:
    """The member's next current assignment (itself when it cannot move on yet). `subscribed`
    (None: everything in the target is subscribed) filters what the member may keep or get."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(
                member, member.member_epoch, target_epoch, target, is_free, owned, subscribed
            )
        if subscription_changed and subscribed is not None:
            return _drop_unsubscribed(member, subscribed(), owned)
        return current_of(member)
    if state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(member.pending_revocation, owned):
            if subscription_changed and subscribed is not None:
                return _drop_unsubscribed(member, subscribed(), owned)
            return current_of(member)
        return _next_assignment(member, member.member_epoch, target_epoch, target, is_free, owned, subscribed)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next_assignment(member, member.member_epoch, target_epoch, target, is_free, owned, subscribed)
    if owned is None or owned:
        raise FencedMember("the member is in an unknown state: it must give up its partitions and rejoin")
    return _next_assignment(member, target_epoch, target_epoch, target, is_free, owned, subscribed)


def _drop_unsubscribed(
    member: ConsumerGroupMember, subscribed: frozenset[uuid.UUID], owned: OwnedPartitions | None
) -> Reconciled:
    """Kafka's updateCurrentAssignment: the partitions of topics the member no longer subscribes to
    leave its assignment at its epoch (to be revoked, if it still reports owning them)."""
    removed = {t: p for t, p in member.assigned.items() if t not in subscribed}
    if not removed:
        return current_of(member)
    kept = {t: p for t, p in member.assigned.items() if t in subscribed}
    pending = dict(member.pending_revocation)
    for topic_id, partitions in removed.items():
        pending[topic_id] = pending.get(topic_id, frozenset()) | partitions
    epoch = member.member_epoch
    if owns_any(pending, owned):
        return Reconciled(epoch, epoch, MemberState.UNREVOKED_PARTITIONS, kept, pending)
    return Reconciled(epoch, epoch, member.state, kept, member.pending_revocation)


def _next_assignment(
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: PartitionMap,
    is_free: IsFree,
    owned: OwnedPartitions | None,
    subscribed: Subscribed | None,
) -> Reconciled:
    retained: PartitionMap = {}
    revoking: PartitionMap = {}
    assigning: PartitionMap = {}
    unreleased = False
    topic_ids = None if subscribed is None else subscribed()
    for topic_id in target.keys() | member.assigned.keys():
        wanted = target.get(topic_id, frozenset())
        if topic_ids is not None and topic_id not in topic_ids:
            wanted = frozenset()  # no longer subscribed: its target counts as empty
        current = member.assigned.get(topic_id, frozenset())
        if kept := current & wanted:
            retained[topic_id] = kept
        if gone := current - wanted:
            revoking[topic_id] = gone
        new = wanted - current
        free = frozenset(p for p in new if is_free(topic_id, p))
        if free:
            assigning[topic_id] = free
        if len(free) != len(new):
            unreleased = True
    if revoking and owns_any(revoking, owned):
        # Revoke first: the member keeps its epoch and only what it retains.
        return Reconciled(
            member_epoch, member.member_epoch, MemberState.UNREVOKED_PARTITIONS, retained, revoking
        )
    assigned = dict(retained)
    for topic_id, partitions in assigning.items():
        assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return Reconciled(target_epoch, member.member_epoch, state, assigned, {})
