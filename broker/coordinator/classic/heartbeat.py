"""Classic member liveness: the Heartbeat request and each member's session deadline.

`Liveness` is the `Sessions` interface a DelayedHeartbeat talks to. A member's deadline moves on
every sign of life (heartbeat, join, sync, commit); when it passes, the member is removed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.delayed import DelayedHeartbeat, member_key
from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.member import Member
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.outbox import Outbox, entry
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.rebalance import Rebalance
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class Liveness:
    """Heartbeats and session deadlines of classic members."""

    __slots__ = ("_groups", "_rebalance", "_timer", "other_groups", "outbox", "rt")

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.outbox: Outbox = rt.outbox
        # The runtime's own dict and timer (never replaced), one lookup nearer on the hot path.
        self._groups = rt.groups
        self._timer = rt.timer
        self._rebalance: Rebalance | None = None
        # Heartbeats for an id that is no classic group (a classic member inside a consumer group).
        self.other_groups: Callable[[str, str, str | None, int], ErrorCode | None] = _no_group

    def bind(self, rebalance: Rebalance) -> None:
        """The rebalance logic that removes expired members (it schedules deadlines here in turn)."""
        self._rebalance = rebalance

    @property
    def rebalance(self) -> Rebalance:
        assert self._rebalance is not None, "Liveness used before bind()"
        return self._rebalance

    def heartbeat(
        self, group_id: str | None, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        """Kafka's checks in Kafka's order, with the lookups inlined: the hottest coordinator call.

        An entry of the outbox like every public call, with `@entry`'s enter/leave written out
        (the decorator's *args call costs a tenth of this call); `GroupCoordinator.heartbeat` is this.
        """
        outbox = self.outbox
        outbox.depth += 1
        try:
            error = self.rt.validate_group_status(group_id, allow_empty_id=False)
            if error is not None:
                # While the group loads, answer blindly.
                return ErrorCode.NONE if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error
            group = self._groups.get(group_id)  # type: ignore[arg-type]
            if group is None:
                other = self.other_groups(group_id, member_id, group_instance_id, generation_id)  # type: ignore[arg-type]
                return ErrorCode.UNKNOWN_MEMBER_ID if other is None else other
            state = group.state
            if state is GroupState.DEAD:
                return ErrorCode.COORDINATOR_NOT_AVAILABLE
            if group_instance_id is not None:
                error = group.validate_member(member_id, group_instance_id)
                if error is not None:
                    return error
            member = group.find(member_id)
            if member is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            if state is GroupState.EMPTY:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)
            if state is GroupState.PREPARING_REBALANCE:
                return ErrorCode.REBALANCE_IN_PROGRESS
            return ErrorCode.NONE
        finally:
            outbox.leave()

    # -- deadlines ------------------------------------------------------------------------------

    def complete_and_schedule_next_heartbeat(self, group: ClassicGroup, member: Member) -> None:
        self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def complete_and_schedule_next_expiration(
        self, group: ClassicGroup, member: Member, timeout_ms: int
    ) -> None:
        """Kafka's completeAndScheduleNextExpiration: the old deadline goes, a new one starts now.

        While the member's current DelayedHeartbeat is still pending, moving its deadline is the same
        thing at a fraction of the cost (no new operation, no watcher churn): the hot Heartbeat path.
        """
        member.heartbeat_satisfied = False
        op = member.heartbeat_op
        if op is not None and not op.is_completed and op.member_id == member.member_id:
            op.delay_ms = timeout_ms
            self._timer.add(op)  # moves the pending task
            # member.has_satisfied_heartbeat, inlined (heartbeat_satisfied is False just above):
            # a parked join or sync of a member that is not new, and no deadline runs meanwhile.
            if not member.is_new and (member.join_callback is not None or member.sync_callback is not None):
                op.force_complete()
            return
        key = member_key(group.group_id, member.member_id)
        purgatory = self.rt.heartbeat_purgatory
        member.heartbeat_satisfied = True
        purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        op = DelayedHeartbeat(self, group, member.member_id, False, timeout_ms)
        member.heartbeat_op = op
        purgatory.try_complete_else_watch(op, (key,))

    def watch_pending_member(self, group: ClassicGroup, member_id: str, timeout_ms: int) -> None:
        """A KIP-394 member id handed out: it must come back and join within `timeout_ms`."""
        self.rt.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member_id, True, timeout_ms),
            (member_key(group.group_id, member_id),),
        )

    def check_session(self, group: ClassicGroup, member_id: str) -> None:
        """Re-check a member's deadline (it left or was removed: the deadline completes harmlessly)."""
        self.rt.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))

    # -- Sessions (the DelayedHeartbeat's interface) --------------------------------------------

    def session_settled(self, group: ClassicGroup, member_id: str, is_pending: bool) -> bool:
        member = group.find(member_id)
        if group.state is GroupState.DEAD:
            return True
        if is_pending:
            return member is not None
        return member is None or member.has_satisfied_heartbeat

    @entry
    def expire_session(self, group: ClassicGroup, member_id: str, is_pending: bool) -> None:
        if group.is_(GroupState.DEAD):
            return
        if is_pending:
            if group.is_pending_member(member_id):
                log.info("member.pending_expired", group=group.group_id, member=member_id)
            self.rebalance.remove_pending_member_and_update_group(group, member_id)
            return
        member = group.find(member_id)
        if member is not None and not member.has_satisfied_heartbeat:
            self.rebalance.remove_member_and_update_group(
                group, member, f"member {member_id} removed on heartbeat expiration"
            )


def _no_group(group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> ErrorCode | None:
    return None
