"""The rebalance engine: join and sync phases, DelayedJoin/InitialDelayedJoin/DelayedSync, heartbeats."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafkito.broker.coordinator.base import CoordinatorBase, entry, log
from kafkito.broker.coordinator.delayed import (
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
    join_key,
    member_key,
    sync_key,
)
from kafkito.broker.coordinator.group import AFTER_JOIN, REBALANCING_OR_DONE, Group, GroupState
from kafkito.broker.coordinator.member import Member
from kafkito.broker.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    JoinGroupResult,
    SyncGroupResult,
)
from kafkito.protocol.errors import ErrorCode


class RebalanceEngine(CoordinatorBase):
    """Kafka's rebalance machinery: join and sync phases, their delayed operations, member liveness."""

    def _join_result(
        self,
        group: Group,
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

    # -- rebalance engine -----------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        rebalance_timeout = group.rebalance_timeout_ms()
        op: DelayedJoin
        if group.is_(GroupState.EMPTY):
            delay = self.config.group_initial_rebalance_delay_ms
            op = InitialDelayedJoin(self, group, delay, delay, max(rebalance_timeout - delay, 0))
        else:
            op = DelayedJoin(self, group, rebalance_timeout)
        self._transition(group, GroupState.PREPARING_REBALANCE, reason)
        self.rebalance_purgatory.try_complete_else_watch(op, (join_key(group.group_id),))

    def _try_complete_join(self, group: Group, force_complete: Callable[[], bool]) -> bool:
        if group.has_all_members_joined():
            return force_complete()
        return False

    @entry
    def _on_complete_initial_join(self, op: InitialDelayedJoin) -> None:
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
            self.rebalance_purgatory.try_complete_else_watch(
                InitialDelayedJoin(self, group, op.configured_delay_ms, delay, remaining),
                (join_key(group.group_id),),
            )
        else:
            self._on_complete_join(group)

    @entry
    def _on_complete_join(self, group: Group) -> None:
        dropped = [m for m in group.not_yet_rejoined() if not m.is_static]
        for member in dropped:
            self._drop_member(group, member)
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
            self.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), (join_key(group.group_id),)
            )
            return
        previous = group.state
        group.init_next_generation(self.clock.now_ms())
        self._log_transition(group, previous, "join phase completed")
        if group.is_(GroupState.EMPTY):

            def on_stored(append_error: ErrorCode) -> None:
                if append_error is not ErrorCode.NONE:
                    # Harmless: an empty generation has no members that could be misled.
                    log.warning("group.empty_store_failed", group=group.group_id, error=append_error.name)

            self.store.store_group(group, {}, self._guard(on_stored))
            return
        for member in group.members():
            self._reply_join(group, member, self._join_result(group, member.member_id))
            self._complete_and_schedule_next_heartbeat(group, member)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        self.rebalance_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms()),
            (sync_key(group.group_id),),
        )

    def _try_complete_pending_sync(
        self, group: Group, generation_id: int, force_complete: Callable[[], bool]
    ) -> bool:
        if generation_id != group.generation_id or group.state in REBALANCING_OR_DONE:
            return force_complete()
        if group.has_received_sync_from_all_members():
            return force_complete()
        return False

    @entry
    def _on_expire_pending_sync(self, group: Group, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in AFTER_JOIN:
            return
        pending = group.pending_sync_members()
        if not pending:
            return
        for member_id in pending:
            if group.has(member_id):
                self._drop_member(group, group.get(member_id))
        log.info(
            "group.members_not_synced",
            group=group.group_id,
            removed=sorted(pending),
            generation=generation_id,
        )
        self._prepare_rebalance(group, f"removing {sorted(pending)} on pending sync expiration")

    def _drop_member(self, group: Group, member: Member) -> None:
        """Remove a member with no rebalance of its own; anything it had parked is answered first."""
        self._reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        self._reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))

    def _remove_member_and_update_group(self, group: Group, member: Member, reason: str) -> None:
        # A timed-out new member may still have its JoinGroup parked: UNKNOWN_MEMBER_ID makes it retry.
        self._reply_join(group, member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        # Kafka leaves a parked SyncGroup of a removed member unanswered; answering lets no request hang.
        self._reply_sync(member, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        log.info(
            "member.removed",
            group=group.group_id,
            member=member.member_id,
            instance=member.group_instance_id,
            generation=group.generation_id,
            reason=reason,
        )
        state = group.state
        if state in AFTER_JOIN:
            self._maybe_prepare_rebalance(group, reason)
        elif state is GroupState.PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: Group, member_id: str) -> None:
        group.remove(member_id)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_sync_expiration(self, group: Group) -> None:
        group.clear_pending_sync_members()
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _remove_pending_sync_member(self, group: Group, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _reset_and_propagate_assignment_error(self, group: Group, error: ErrorCode) -> None:
        for member in group.members():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _set_and_propagate_assignment(self, group: Group, assignment: Mapping[str, bytes]) -> None:
        for member in group.members():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate_assignment(group, ErrorCode.NONE)

    def _propagate_assignment(self, group: Group, error: ErrorCode) -> None:
        ok = error is ErrorCode.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in group.members():
            result = SyncGroupResult(error, protocol_type, protocol_name, member.assignment)
            if self._reply_sync(member, result):
                # A deadline that passed while the sync was parked was ignored: start a fresh one.
                self._complete_and_schedule_next_heartbeat(group, member)

    # -- liveness -------------------------------------------------------------------------------

    def _complete_and_schedule_next_heartbeat(self, group: Group, member: Member) -> None:
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(self, group: Group, member: Member, timeout_ms: int) -> None:
        """Kafka's completeAndScheduleNextExpiration: the old deadline goes, a new one starts now.

        While the member's current DelayedHeartbeat is still pending, moving its deadline is the same
        thing at a fraction of the cost (no new operation, no watcher churn): the hot Heartbeat path.
        """
        member.heartbeat_satisfied = False
        op = member.heartbeat_op
        if op is not None and not op.is_completed and op.member_id == member.member_id:
            op.delay_ms = timeout_ms
            self.timer.add(op)  # moves the pending task
            # member.has_satisfied_heartbeat, inlined (heartbeat_satisfied is False just above):
            # a parked join or sync of a member that is not new, and no deadline runs meanwhile.
            if not member.is_new and (member.join_callback is not None or member.sync_callback is not None):
                op.force_complete()
            return
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        op = DelayedHeartbeat(self, group, member.member_id, False, timeout_ms)
        member.heartbeat_op = op
        self.heartbeat_purgatory.try_complete_else_watch(op, (key,))

    def _try_complete_heartbeat(
        self, group: Group, member_id: str, is_pending: bool, force_complete: Callable[[], bool]
    ) -> bool:
        member = group.find(member_id)
        if group.state is GroupState.DEAD:
            return force_complete()
        if is_pending:
            return force_complete() if member is not None else False
        if member is None or member.has_satisfied_heartbeat:
            return force_complete()
        return False

    @entry
    def _on_expire_heartbeat(self, group: Group, member_id: str, is_pending: bool) -> None:
        if group.is_(GroupState.DEAD):
            return
        if is_pending:
            if group.is_pending_member(member_id):
                log.info("member.pending_expired", group=group.group_id, member=member_id)
            self._remove_pending_member_and_update_group(group, member_id)
            return
        if not group.has(member_id):
            return
        member = group.get(member_id)
        if not member.has_satisfied_heartbeat:
            self._remove_member_and_update_group(
                group, member, f"member {member_id} removed on heartbeat expiration"
            )
