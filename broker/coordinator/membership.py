"""The member-facing requests of the coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from kafkito.broker.coordinator.base import entry, log
from kafkito.broker.coordinator.delayed import (
    DelayedHeartbeat,
    join_key,
    member_key,
)
from kafkito.broker.coordinator.group import Group, GroupState, IllegalGroupStateError
from kafkito.broker.coordinator.member import Member
from kafkito.broker.coordinator.offsets import group_store_error
from kafkito.broker.coordinator.rebalance import RebalanceEngine
from kafkito.broker.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    JoinCallback,
    JoinGroupResult,
    LeaveGroupResult,
    LeaveMemberResult,
    LeavingMember,
    SyncCallback,
    SyncGroupResult,
)
from kafkito.protocol.errors import ErrorCode


class Membership(RebalanceEngine):
    """The member-facing requests: JoinGroup, SyncGroup, Heartbeat and LeaveGroup."""

    # -- JoinGroup ------------------------------------------------------------------------------

    @entry
    def join_group(
        self,
        group_id: str | None,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        callback: JoinCallback,
        *,
        api_version: int = 9,
        reason: str | None = None,
    ) -> None:
        """JoinGroup of version `api_version` (v0 uses the session timeout as rebalance timeout)."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            self._send(callback, JoinGroupResult(member_id, error))
            return
        assert group_id is not None
        if not (
            self.config.group_min_session_timeout_ms
            <= session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            self._send(callback, JoinGroupResult(member_id, ErrorCode.INVALID_SESSION_TIMEOUT))
            return
        if api_version == 0:
            rebalance_timeout_ms = session_timeout_ms
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self._groups.get(group_id)
        if group is None:
            if not is_unknown:
                self._send(callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
                return
            group = self._add_group(Group(group_id, self.clock.now_ms()))
        join = _Join(
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            list(protocols),
            callback,
            api_version,
            reason or "not provided",
        )
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            log.info(
                "member.rejected_group_full", group=group_id, member=member_id, max=self.config.group_max_size
            )
            self._send(callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
        elif is_unknown:
            self._join_new_member(group, join)
        else:
            self._join_current_member(group, join)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.rebalance_purgatory.check_and_complete(join_key(group_id))

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        state = group.state
        if state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        max_size = self.config.group_max_size
        if state is GroupState.PREPARING_REBALANCE:
            # Counting those already waiting (not the size) sheds the last members to rejoin.
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or (
                group.num_awaiting_join < max_size
            )
        return group.has(member_id) or group.size < max_size

    def _join_new_member(self, group: Group, join: _Join) -> None:
        if group.is_(GroupState.DEAD):
            self._send(join.callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(join.protocol_type, (name for name, _ in join.protocols)):
            self._send(
                join.callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            )
            return
        new_member_id = Group.generate_member_id(join.client_id, join.group_instance_id)
        if join.group_instance_id is not None:
            old_member_id = group.static_member_id(join.group_instance_id)
            if old_member_id is not None:
                self._replace_static_member(group, join, join.group_instance_id, old_member_id, new_member_id)
            else:
                self._add_member_and_rebalance(group, join, new_member_id)
        elif join.api_version >= 4:
            # KIP-394: hand out the id and wait for a second JoinGroup that uses it.
            group.add_pending_member(new_member_id)
            log.info("member.pending", group=group.group_id, member=new_member_id, state=group.state.value)
            self.heartbeat_purgatory.try_complete_else_watch(
                DelayedHeartbeat(self, group, new_member_id, True, join.session_timeout_ms),
                (member_key(group.group_id, new_member_id),),
            )
            self._send(join.callback, JoinGroupResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, join, new_member_id)

    def _join_current_member(self, group: Group, join: _Join) -> None:
        member_id = join.member_id
        if group.is_(GroupState.DEAD):
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(join.protocol_type, (name for name, _ in join.protocols)):
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            if join.group_instance_id is not None:
                # Kafka throws here (a pending id is never static): the client sees UNKNOWN_SERVER_ERROR.
                self._send(join.callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_SERVER_ERROR))
                return
            self._add_member_and_rebalance(group, join, member_id)
            return
        error = self._validate_current_member(group, member_id, join.group_instance_id)
        if error is not None:
            self._send(join.callback, JoinGroupResult(member_id, error))
            return
        member = group.get(member_id)
        state = group.state
        if state is GroupState.PREPARING_REBALANCE:
            self._update_member_and_rebalance(
                group,
                member,
                join,
                f"member {member_id} joining during PreparingRebalance; reason: {join.reason}",
            )
        elif state is GroupState.COMPLETING_REBALANCE:
            if member.matches(join.protocols):
                # Probably a retry after a lost JoinGroup response: answer with the current generation.
                self._send(join.callback, self._join_result(group, member_id))
            else:
                self._update_member_and_rebalance(
                    group,
                    member,
                    join,
                    f"member {member_id} changed metadata during CompletingRebalance; reason: {join.reason}",
                )
        elif state is GroupState.STABLE:
            if group.is_leader(member_id):
                # Lets the leader trigger a rebalance for changes outside member metadata (new partitions).
                self._update_member_and_rebalance(
                    group, member, join, f"leader {member_id} rejoining during Stable; reason: {join.reason}"
                )
            elif not member.matches(join.protocols):
                self._update_member_and_rebalance(
                    group,
                    member,
                    join,
                    f"member {member_id} changed metadata during Stable; reason: {join.reason}",
                )
            else:
                self._send(join.callback, self._join_result(group, member_id, with_members=False))
        else:
            self._send(join.callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))

    def _add_member_and_rebalance(self, group: Group, join: _Join, member_id: str) -> None:
        member = Member(
            member_id,
            join.group_instance_id,
            join.client_id,
            join.client_host,
            join.rebalance_timeout_ms,
            join.session_timeout_ms,
            join.protocol_type,
            join.protocols,
            join_callback=join.callback,
            is_new=True,
        )
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        log.info(
            "member.added",
            group=group.group_id,
            member=member_id,
            instance=join.group_instance_id,
            client_id=join.client_id,
            client_host=join.client_host,
            session_timeout_ms=join.session_timeout_ms,
            rebalance_timeout_ms=join.rebalance_timeout_ms,
            protocols=[name for name, _ in join.protocols],
        )
        # A new member cannot heartbeat (no id yet) and its muted socket hides a disconnect, so its
        # parked JoinGroup gets its own deadline; if it is still around later it will retry.
        self._complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(
            group,
            f"adding new member {member_id} with group instance id {join.group_instance_id}; "
            f"reason: {join.reason}",
        )

    def _update_member_and_rebalance(self, group: Group, member: Member, join: _Join, reason: str) -> None:
        # Kafka drops a superseded parked JoinGroup unanswered; answering lets no request hang.
        self._reply_join(group, member, JoinGroupResult(member.member_id, ErrorCode.REBALANCE_IN_PROGRESS))
        group.update_member(
            member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms, join.callback
        )
        self._maybe_prepare_rebalance(group, reason)

    def _replace_static_member(
        self, group: Group, join: _Join, instance_id: str, old_member_id: str, new_member_id: str
    ) -> None:
        current_leader = group.leader_id or ""
        old = group.get(old_member_id)
        # Fence whoever still waits under the old id right away.
        self._reply_join(group, old, JoinGroupResult(old_member_id, ErrorCode.FENCED_INSTANCE_ID))
        self._reply_sync(old, SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID))
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        log.info(
            "member.static_replaced",
            group=group.group_id,
            instance=instance_id,
            old_member=old_member_id,
            member=new_member_id,
            state=group.state.value,
            generation=group.generation_id,
        )
        # The old id's heartbeat deadline expires harmlessly: that id is no longer in the group.
        self._complete_and_schedule_next_heartbeat(group, member)
        old_protocols = member.protocols
        old_rebalance_timeout, old_session_timeout = member.rebalance_timeout_ms, member.session_timeout_ms
        group.update_member(
            member, join.protocols, join.rebalance_timeout_ms, join.session_timeout_ms, join.callback
        )
        state = group.state
        if state is GroupState.STABLE:
            if group.protocol_name != group.select_protocol():
                self._maybe_prepare_rebalance(
                    group,
                    f"static member {instance_id} rejoined with a change of protocol; reason: {join.reason}",
                )
                return
            assignment = {m.member_id: m.assignment for m in group.members()}
            skip_ok = join.api_version >= 9

            def on_stored(append_error: ErrorCode) -> None:
                if append_error is not ErrorCode.NONE:
                    error = group_store_error(append_error)
                    log.warning(
                        "member.static_replacement_reverted",
                        group=group.group_id,
                        instance=instance_id,
                        member=new_member_id,
                        error=error.name,
                    )
                    group.update_member(
                        member, old_protocols, old_rebalance_timeout, old_session_timeout, None
                    )
                    restored = group.replace_static_member(instance_id, new_member_id, old_member_id)
                    self._complete_and_schedule_next_heartbeat(group, restored)
                    self._send(
                        join.callback,
                        JoinGroupResult(
                            UNKNOWN_MEMBER_ID,
                            error,
                            group.generation_id,
                            group.protocol_type,
                            group.protocol_name,
                            current_leader,
                        ),
                    )
                elif skip_ok:
                    # v9+: a static leader is told it leads but must not run the assignor again.
                    is_leader = group.is_leader(new_member_id)
                    self._reply_join(
                        group,
                        member,
                        self._join_result(
                            group,
                            new_member_id,
                            skip_assignment=is_leader,
                        ),
                    )
                else:
                    # Before v9: name the old leader id so the new id does not believe it leads and
                    # computes an assignment a Stable group would never hand out.
                    self._reply_join(
                        group,
                        member,
                        self._join_result(
                            group,
                            new_member_id,
                            with_members=False,
                            leader_id=current_leader,
                        ),
                    )

            self.store.store_group(group, assignment, self._guard(on_stored))
        elif state is GroupState.COMPLETING_REBALANCE:
            # The leader may already be assigning to the old id: start over.
            self._prepare_rebalance(
                group,
                f"static member {instance_id} replaced during CompletingRebalance; reason: {join.reason}",
            )
        elif state is not GroupState.PREPARING_REBALANCE:
            raise IllegalGroupStateError(
                f"static member {instance_id} rejoined group {group.group_id} in {state}"
            )

    # -- SyncGroup ------------------------------------------------------------------------------

    @entry
    def sync_group(
        self,
        group_id: str | None,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        """SyncGroup; `protocol_type`/`protocol_name` are None before v5 (not checked)."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance state is lost while loading; older clients do not expect error 14 here.
            self._send(callback, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            self._send(callback, SyncGroupResult(error))
            return
        assert group_id is not None
        group = self._groups.get(group_id)
        if group is None:
            self._send(callback, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        error = self._validate_sync(
            group, generation_id, member_id, group_instance_id, protocol_type, protocol_name
        )
        if error is not None:
            self._send(callback, SyncGroupResult(error))
            return
        state = group.state
        if state is GroupState.EMPTY:
            self._send(callback, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif state is GroupState.PREPARING_REBALANCE:
            self._send(callback, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif state is GroupState.COMPLETING_REBALANCE:
            member = group.get(member_id)
            # A second SyncGroup for the same member replaces the first, which must still get an answer.
            self._reply_sync(member, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            member.sync_callback = callback
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self._store_leader_assignment(group, generation_id, member_id, assignments)
        elif state is GroupState.STABLE:
            member = group.get(member_id)
            self._remove_pending_sync_member(group, member_id)
            self._send(
                callback,
                SyncGroupResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment),
            )
            self._complete_and_schedule_next_heartbeat(group, member)
        else:
            raise IllegalGroupStateError(f"SyncGroup reached group {group_id} in {state}")

    def _validate_sync(
        self,
        group: Group,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self._validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if protocol_type is not None and protocol_type != group.protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and protocol_name != group.protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _store_leader_assignment(
        self, group: Group, generation_id: int, leader_id: str, assignments: Mapping[str, bytes]
    ) -> None:
        assignment = {m: assignments.get(m, b"") for m in group.member_ids()}
        missing = [m for m in assignment if m not in assignments]
        log.info(
            "group.assignment_received",
            group=group.group_id,
            generation=generation_id,
            leader=leader_id,
            members=group.size,
            static_members=len(group.static_instance_ids()),
            missing=missing,
        )

        def on_stored(append_error: ErrorCode) -> None:
            # Another member may have joined meanwhile: only the same generation, still completing, counts.
            if not (group.is_(GroupState.COMPLETING_REBALANCE) and generation_id == group.generation_id):
                return
            if append_error is not ErrorCode.NONE:
                error = group_store_error(append_error)
                self._reset_and_propagate_assignment_error(group, error)
                self._maybe_prepare_rebalance(
                    group,
                    f"error {error.name} storing group assignment during SyncGroup (leader {leader_id})",
                )
            else:
                self._set_and_propagate_assignment(group, assignment)
                self._transition(group, GroupState.STABLE, f"assignment of leader {leader_id} stored")

        self.store.store_group(group, assignment, self._guard(on_stored))

    # -- Heartbeat and LeaveGroup ----------------------------------------------------------------

    def heartbeat(
        self, group_id: str | None, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        """An `entry`, its bookkeeping written out: the hottest coordinator call, where the wrapper costs."""
        self._depth += 1
        try:
            # Kafka's checks in Kafka's order, with the lookups inlined.
            error = self._validate_group_status(group_id, allow_empty_id=False)
            if error is not None:
                # While the group loads, answer blindly.
                return ErrorCode.NONE if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error
            group = self._groups.get(group_id)  # type: ignore[arg-type]
            if group is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            state = group.state
            if state is GroupState.DEAD:
                return ErrorCode.COORDINATOR_NOT_AVAILABLE
            if group_instance_id is not None:
                error = self._validate_current_member(group, member_id, group_instance_id)
                if error is not None:
                    return error
            member = group.find(member_id)
            if member is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            if state is GroupState.EMPTY:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)
            if state is GroupState.PREPARING_REBALANCE:
                return ErrorCode.REBALANCE_IN_PROGRESS
            return ErrorCode.NONE
        finally:
            self._depth -= 1
            if self._depth == 0 and self._outbox:
                self._flush()

    @entry
    def leave_group(self, group_id: str | None, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        """LeaveGroup (a batch since v3); member_id "" with an instance id removes that static member."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return LeaveGroupResult(error)
        group = self._groups.get(group_id)  # type: ignore[arg-type]
        if group is None:
            return LeaveGroupResult(
                ErrorCode.NONE,
                tuple(
                    LeaveMemberResult(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID)
                    for m in members
                ),
            )
        if group.is_(GroupState.DEAD):
            return LeaveGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        results = [
            LeaveMemberResult(m.member_id, m.group_instance_id, self._leave_one(group, m)) for m in members
        ]
        return LeaveGroupResult(ErrorCode.NONE, tuple(results))

    def _leave_one(self, group: Group, leaving: LeavingMember) -> ErrorCode:
        reason = leaving.reason or "not provided"
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            current = (
                group.static_member_id(leaving.group_instance_id)
                if leaving.group_instance_id is not None
                else None
            )
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove_leaving_member(
                group, current, f"static member removed by LeaveGroup; reason: {reason}"
            )
            return ErrorCode.NONE
        if group.is_pending_member(leaving.member_id):
            log.info("member.pending_left", group=group.group_id, member=leaving.member_id)
            self._remove_pending_member_and_update_group(group, leaving.member_id)
            self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, leaving.member_id))
            return ErrorCode.NONE
        error = self._validate_current_member(group, leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        self._remove_leaving_member(group, leaving.member_id, f"member left by LeaveGroup; reason: {reason}")
        return ErrorCode.NONE

    def _remove_leaving_member(self, group: Group, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self._remove_member_and_update_group(group, member, reason)
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))


@dataclasses.dataclass(slots=True)
class _Join:
    """One JoinGroup request, as the join paths pass it around."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    callback: JoinCallback
    api_version: int
    reason: str
