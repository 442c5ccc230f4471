"""The classic rebalance: join and sync phases, their delayed operations, and removing members.

`Rebalance` is the `JoinPhase` and `SyncPhase` the delayed operations talk to. The request paths
(join, sync, leave) and liveness call its public methods; nothing here answers a request directly
except through the runtime's outbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.delayed import (
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
    join_key,
    member_key,
    sync_key,
)
from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.member import Member
from kafkito.broker.coordinator.classic.snapshot import group_record
from kafkito.broker.coordinator.classic.state import AFTER_JOIN, REBALANCING_OR_DONE, GroupState
from kafkito.broker.coordinator.outbox import Outbox, entry
from kafkito.broker.coordinator.records import CoordinatorResult
from kafkito.broker.coordinator.results import UNKNOWN_MEMBER_ID, JoinGroupResult, SyncGroupResult
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.heartbeat import Liveness
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class Rebalance:
    """Kafka's rebalance machinery for classic groups (GroupMetadataManager's classic half)."""

    __slots__ = ("liveness", "outbox", "rt")

    def __init__(self, rt: Runtime, liveness: Liveness) -> None:
        self.rt = rt
        self.outbox: Outbox = rt.outbox
        self.liveness = liveness

    # -- answers --------------------------------------------------------------------------------

    def reply_join(self, group: ClassicGroup, member: Member, result: JoinGroupResult) -> None:
        callback = group.take_join_callback(member)
        if callback is not None:
            self.outbox.send(callback, result)

    def reply_sync(self, member: Member, result: SyncGroupResult) -> bool:
        callback = member.sync_callback
        if callback is None:
            return False
        member.sync_callback = None
        self.outbox.send(callback, result)
        return True

    @staticmethod
    def join_result(
        group: ClassicGroup,
        member_id: str,
        *,
        with_members: bool = True,
        leader_id: str | None = None,
        skip_assignment: bool = False,
    ) -> JoinGroupResult:
        is_leader = group.is_leader(member_id)
        return JoinGroupResult(
            member_id=member_id,
            error=ErrorCode.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=(group.leader_id or "") if leader_id is None else leader_id,
            skip_assignment=skip_assignment,
            members=group.current_member_metadata() if with_members and is_leader else (),
        )

    # -- the join phase (JoinPhase) -------------------------------------------------------------

    def maybe_prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self.reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        rebalance_timeout = group.rebalance_timeout_ms()
        op: DelayedJoin
        if group.is_(GroupState.EMPTY):
            delay = self.rt.config.group_initial_rebalance_delay_ms
            op = InitialDelayedJoin(self, group, delay, delay, max(rebalance_timeout - delay, 0))
        else:
            op = DelayedJoin(self, group, rebalance_timeout)
        self.rt.transition(group, GroupState.PREPARING_REBALANCE, reason)
        self.rt.rebalance_purgatory.try_complete_else_watch(op, (join_key(group.group_id),))

    def check_join(self, group: ClassicGroup) -> None:
        """Re-check the open join phase of `group` (a member joined, left or timed out)."""
        self.rt.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def all_joined(self, group: ClassicGroup) -> bool:
        return group.has_all_members_joined()

    @entry
    def complete_initial_join(self, op: InitialDelayedJoin) -> None:
        group = op.group
        if group.new_member_added and op.remaining_ms != 0:
            group.new_member_added = False
            delay = min(op.configured_delay_ms, op.remaining_ms)
            remaining = max(op.remaining_ms - op.initial_delay_ms, 0)
            log.info(
                "group.initial_delay_extended",
                group=group.group_id,
                delay_ms=delay,
                remaining_ms=remaining,
                members=group.member_ids(),
            )
            self.rt.rebalance_purgatory.try_complete_else_watch(
                InitialDelayedJoin(self, group, op.configured_delay_ms, delay, remaining),
                (join_key(group.group_id),),
            )
        else:
            self.complete_join(group)

    @entry
    def complete_join(self, group: ClassicGroup) -> None:
        dropped = [m for m in group.not_yet_rejoined() if not m.is_static]
        for member in dropped:
            self.drop_member(group, member)
        if dropped:
            log.info(
                "group.members_not_rejoined",
                group=group.group_id,
                removed=[m.member_id for m in dropped],
                generation=group.generation_id,
            )
        if group.is_(GroupState.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.size > 0:
            # Only static members are left and none rejoined: wait again until they do or time out.
            log.warning(
                "group.rebalance_rescheduled",
                group=group.group_id,
                generation=group.generation_id,
                members=group.member_ids(),
                reason="no member rejoined",
            )
            self.rt.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), (join_key(group.group_id),)
            )
            return
        previous = group.state
        group.init_next_generation(self.rt.clock.now_ms())
        self.rt.log_transition(group, previous, "join phase completed")
        if group.is_(GroupState.EMPTY):
            group_id = group.group_id
            self.rt.write(
                CoordinatorResult(group_id, [group_record(group, {})], partial(_empty_group_stored, group_id))
            )
            return
        for member in group.members():
            self.reply_join(group, member, self.join_result(group, member.member_id))
            self.liveness.complete_and_schedule_next_heartbeat(group, member)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        self.rt.rebalance_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms()),
            (sync_key(group.group_id),),
        )

    # -- the sync phase (SyncPhase) -------------------------------------------------------------

    def sync_settled(self, group: ClassicGroup, generation_id: int) -> bool:
        if generation_id != group.generation_id or group.state in REBALANCING_OR_DONE:
            return True
        return group.has_received_sync_from_all_members()

    @entry
    def expire_pending_sync(self, group: ClassicGroup, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in AFTER_JOIN:
            return
        pending = group.pending_sync_members()
        if not pending:
            return
        for member_id in pending:
            if group.has(member_id):
                self.drop_member(group, group.get(member_id))
        log.info(
            "group.members_not_synced",
            group=group.group_id,
            removed=sorted(pending),
            generation=generation_id,
        )
        self.prepare_rebalance(group, f"removing {sorted(pending)} on pending sync expiration")

    def remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.clear_pending_sync_members()
        self.rt.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.rt.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def reset_and_propagate_assignment_error(self, group: ClassicGroup, error: ErrorCode) -> None:
        for member in group.members():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def set_and_propagate_assignment(self, group: ClassicGroup, assignment: Mapping[str, bytes]) -> None:
        for member in group.members():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate_assignment(group, ErrorCode.NONE)

    def _propagate_assignment(self, group: ClassicGroup, error: ErrorCode) -> None:
        ok = error is ErrorCode.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in group.members():
            result = SyncGroupResult(error, protocol_type, protocol_name, member.assignment)
            if self.reply_sync(member, result):
                # A deadline that passed while the sync was parked was ignored: start a fresh one.
                self.liveness.complete_and_schedule_next_heartbeat(group, member)

    # -- removing members -----------------------------------------------------------------------

    def drop_member(self, group: ClassicGroup, member: Member) -> None:
        """Remove a member with no rebalance of its own; anything it had parked is answered first."""
        self.reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        self.reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self.rt.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
        self.rt.timeline.member_left(
            group.group_id,
            member.member_id,
            generation=group.generation_id,
            reason="did not rejoin or sync in time",
        )

    def remove_member_and_update_group(self, group: ClassicGroup, member: Member, reason: str) -> None:
        # A timed-out new member may still have its JoinGroup parked: UNKNOWN_MEMBER_ID makes it retry.
        self.reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        # Kafka leaves a parked SyncGroup of a removed member unanswered; answering lets no request hang.
        self.reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        log.info(
            "member.removed",
            group=group.group_id,
            member=member.member_id,
            instance=member.group_instance_id,
            generation=group.generation_id,
            reason=reason,
        )
        self.rt.timeline.member_left(
            group.group_id, member.member_id, generation=group.generation_id, reason=reason
        )
        state = group.state
        if state in AFTER_JOIN:
            self.maybe_prepare_rebalance(group, reason)
        elif state is GroupState.PREPARING_REBALANCE:
            self.check_join(group)

    def remove_pending_member_and_update_group(self, group: ClassicGroup, member_id: str) -> None:
        group.remove(member_id)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.check_join(group)


def _empty_group_stored(group_id: str, append_error: ErrorCode) -> None:
    if append_error is not ErrorCode.NONE:
        # Harmless: an empty generation has no members that could be misled.
        log.warning("group.empty_store_failed", group=group_id, error=append_error.name)
