"""JoinGroup for classic groups: new, pending (KIP-394), current and static (KIP-345) members.

The request is validated, the member added or updated, and the group moved to PreparingRebalance;
the answer waits (parked in the member's join callback) until `Rebalance.complete_join` closes the
phase. A static member rejoining a Stable group is answered once its replacement is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.member import Member, Protocols
from kafkito.broker.coordinator.classic.snapshot import group_record
from kafkito.broker.coordinator.classic.state import GroupState, IllegalGroupStateError
from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.records import CoordinatorResult
from kafkito.broker.coordinator.requests import JoinGroupRequest
from kafkito.broker.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    JoinCallback,
    JoinGroupResult,
    SyncGroupResult,
)
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.heartbeat import Liveness
    from kafkito.broker.coordinator.classic.rebalance import Rebalance
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


@dataclass(slots=True, frozen=True)
class _Replaced:
    """What a static replacement changed, to undo it if its group record cannot be written."""

    old_member_id: str
    protocols: Protocols
    rebalance_timeout_ms: int
    session_timeout_ms: int
    leader_id: str


class Join:
    """The JoinGroup paths of classic groups."""

    __slots__ = ("liveness", "rebalance", "rt")

    def __init__(self, rt: Runtime, rebalance: Rebalance, liveness: Liveness) -> None:
        self.rt = rt
        self.rebalance = rebalance
        self.liveness = liveness

    def _send(self, callback: JoinCallback, result: JoinGroupResult) -> None:
        self.rt.outbox.send(callback, result)

    def join_group(self, request: JoinGroupRequest, callback: JoinCallback) -> None:
        rt = self.rt
        member_id = request.member_id
        error = rt.validate_group_status(request.group_id, allow_empty_id=False)
        if error is None and not (
            rt.config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= rt.config.group_max_session_timeout_ms
        ):
            error = ErrorCode.INVALID_SESSION_TIMEOUT
        if error is not None:
            self._send(callback, JoinGroupResult(member_id, error))
            return
        group_id = request.group_id
        assert group_id is not None
        if request.api_version == 0:
            request = request._replace(rebalance_timeout_ms=request.session_timeout_ms)
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        if group_id in rt.consumer_groups and not self._leave_consumer_group(group_id, member_id, callback):
            return
        group = rt.groups.get(group_id)
        if group is None:
            if not is_unknown:
                self._send(callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
                return
            group = rt.get_or_create_group(group_id)
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            log.info(
                "member.rejected_group_full",
                group=group.group_id,
                member=member_id,
                max=rt.config.group_max_size,
            )
            self._send(callback, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
        elif is_unknown:
            self._join_new_member(group, request, callback)
        else:
            self._join_current_member(group, request, callback)
        if group.is_(GroupState.PREPARING_REBALANCE):
            self.rebalance.check_join(group)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        state = group.state
        if state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        max_size = self.rt.config.group_max_size
        if state is GroupState.PREPARING_REBALANCE:
            # Counting those already waiting (not the size) sheds the last members to rejoin.
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or (
                group.num_awaiting_join < max_size
            )
        return group.has(member_id) or group.size < max_size

    def _join_error(self, group: ClassicGroup, request: JoinGroupRequest) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if not group.supports_protocols(request.protocol_type, (name for name, _ in request.protocols)):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _leave_consumer_group(self, group_id: str, member_id: str, callback: JoinCallback) -> bool:
        """A classic JoinGroup for the id of an empty KIP-848 consumer group: it is replaced by a
        classic group (its records get tombstones, its offsets stay). True when the join goes on."""
        consumer = self.rt.consumer_groups[group_id]
        if consumer.members:  # the coordinator routes these to the consumer group; never here
            self._send(callback, JoinGroupResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return False
        log.info("group.converted", group=group_id, to_type="classic", reason="classic member joined")
        from kafkito.broker.coordinator.consumer.groups import group_tombstones  # loaded with the group

        self.rt.write_tombstones(group_id, group_tombstones(consumer))
        return True

    def _join_new_member(
        self, group: ClassicGroup, request: JoinGroupRequest, callback: JoinCallback
    ) -> None:
        error = self._join_error(group, request)
        if error is not None:
            self._send(callback, JoinGroupResult(UNKNOWN_MEMBER_ID, error))
            return
        instance_id = request.group_instance_id
        new_member_id = ClassicGroup.generate_member_id(request.client_id, instance_id)
        if instance_id is not None:
            old_member_id = group.static_member_id(instance_id)
            if old_member_id is not None:
                self._replace_static_member(group, request, callback, old_member_id, new_member_id)
            else:
                self._add_member_and_rebalance(group, request, callback, new_member_id)
        elif request.api_version >= 4:
            # KIP-394: hand out the id and wait for a second JoinGroup that uses it.
            group.add_pending_member(new_member_id)
            log.info("member.pending", group=group.group_id, member=new_member_id, state=group.state.value)
            self.liveness.watch_pending_member(group, new_member_id, request.session_timeout_ms)
            self._send(callback, JoinGroupResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, request, callback, new_member_id)

    def _join_current_member(
        self, group: ClassicGroup, request: JoinGroupRequest, callback: JoinCallback
    ) -> None:
        member_id = request.member_id
        error = self._join_error(group, request)
        if error is None and group.is_pending_member(member_id):
            if request.group_instance_id is None:
                self._add_member_and_rebalance(group, request, callback, member_id)
                return
            # Kafka throws here (a pending id is never static): the client sees UNKNOWN_SERVER_ERROR.
            error = ErrorCode.UNKNOWN_SERVER_ERROR
        if error is None:
            error = group.validate_member(member_id, request.group_instance_id)
        if error is not None:
            self._send(callback, JoinGroupResult(member_id, error))
            return
        member = group.get(member_id)
        outcome = self._rejoin(group, member, request)
        if isinstance(outcome, JoinGroupResult):
            self._send(callback, outcome)
        else:
            self._update_member_and_rebalance(group, member, request, callback, outcome)

    def _rejoin(
        self, group: ClassicGroup, member: Member, request: JoinGroupRequest
    ) -> str | JoinGroupResult:
        """Why a current member's JoinGroup rebalances the group, or the answer it gets at once."""
        member_id = member.member_id
        reason = request.reason or "not provided"
        state = group.state
        if state is GroupState.PREPARING_REBALANCE:
            return f"member {member_id} joining during PreparingRebalance; reason: {reason}"
        if state is GroupState.COMPLETING_REBALANCE:
            if member.matches(request.protocols):
                # Probably a retry after a lost JoinGroup response: answer with the current generation.
                return self.rebalance.join_result(group, member_id)
            return f"member {member_id} changed metadata during CompletingRebalance; reason: {reason}"
        if state is GroupState.STABLE:
            if group.is_leader(member_id):
                # Lets the leader trigger a rebalance for changes outside member metadata (new partitions).
                return f"leader {member_id} rejoining during Stable; reason: {reason}"
            if not member.matches(request.protocols):
                return f"member {member_id} changed metadata during Stable; reason: {reason}"
            return self.rebalance.join_result(group, member_id, with_members=False)
        return JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID)

    def _add_member_and_rebalance(
        self, group: ClassicGroup, request: JoinGroupRequest, callback: JoinCallback, member_id: str
    ) -> None:
        member = Member.joining(member_id, request, callback)
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        log.info(
            "member.added",
            group=group.group_id,
            member=member_id,
            instance=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            protocols=[name for name, _ in request.protocols],
        )
        self.rt.timeline.member_joined(
            group.group_id,
            member_id,
            generation=group.generation_id,
            reason=request.reason or "not provided",
            instance=request.group_instance_id,
            client_id=request.client_id,
        )
        # A new member cannot heartbeat (no id yet) and its muted socket hides a disconnect, so its
        # parked JoinGroup gets its own deadline; if it is still around later it will retry.
        self.liveness.complete_and_schedule_next_expiration(
            group, member, self.rt.config.new_member_join_timeout_ms
        )
        self.rebalance.maybe_prepare_rebalance(
            group,
            f"adding new member {member_id} with group instance id {request.group_instance_id}; "
            f"reason: {request.reason or 'not provided'}",
        )

    def _update_member_and_rebalance(
        self,
        group: ClassicGroup,
        member: Member,
        request: JoinGroupRequest,
        callback: JoinCallback,
        reason: str,
    ) -> None:
        # Kafka drops a superseded parked JoinGroup unanswered; answering lets no request hang.
        self.rebalance.reply_join(
            group, member, JoinGroupResult(member.member_id, ErrorCode.REBALANCE_IN_PROGRESS)
        )
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        self.rebalance.maybe_prepare_rebalance(group, reason)

    # -- static members (KIP-345) ---------------------------------------------------------------

    def _replace_static_member(
        self,
        group: ClassicGroup,
        request: JoinGroupRequest,
        callback: JoinCallback,
        old_member_id: str,
        new_member_id: str,
    ) -> None:
        instance_id = request.group_instance_id
        assert instance_id is not None
        old = group.get(old_member_id)
        # Fence whoever still waits under the old id right away.
        self.rebalance.reply_join(group, old, JoinGroupResult(old_member_id, ErrorCode.FENCED_INSTANCE_ID))
        self.rebalance.reply_sync(old, SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID))
        replaced = _Replaced(
            old_member_id,
            old.protocols,
            old.rebalance_timeout_ms,
            old.session_timeout_ms,
            group.leader_id or "",
        )
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        self._note_replaced(group, instance_id, old_member_id, new_member_id)
        # The old id's heartbeat deadline expires harmlessly: that id is no longer in the group.
        self.liveness.complete_and_schedule_next_heartbeat(group, member)
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        reason = request.reason or "not provided"
        state = group.state
        if state is GroupState.STABLE and group.protocol_name != group.select_protocol():
            self.rebalance.maybe_prepare_rebalance(
                group, f"static member {instance_id} rejoined with a change of protocol; reason: {reason}"
            )
        elif state is GroupState.STABLE:
            assignment = {m.member_id: m.assignment for m in group.members()}
            respond = partial(self._replacement_written, group, member, request, callback, replaced)
            self.rt.write(CoordinatorResult(group.group_id, [group_record(group, assignment)], respond))
        elif state is GroupState.COMPLETING_REBALANCE:
            # The leader may already be assigning to the old id: start over.
            self.rebalance.prepare_rebalance(
                group, f"static member {instance_id} replaced during CompletingRebalance; reason: {reason}"
            )
        elif state is not GroupState.PREPARING_REBALANCE:
            raise IllegalGroupStateError(
                f"static member {instance_id} rejoined group {group.group_id} in {state}"
            )

    def _note_replaced(
        self, group: ClassicGroup, instance_id: str, old_member_id: str, new_member_id: str
    ) -> None:
        log.info(
            "member.static_replaced",
            group=group.group_id,
            instance=instance_id,
            old_member=old_member_id,
            member=new_member_id,
            state=group.state.value,
            generation=group.generation_id,
        )
        self.rt.timeline.record(
            group.group_id,
            "member_replaced",
            generation=group.generation_id,
            reason=f"static member {instance_id} rejoined",
            member=new_member_id,
            old_member=old_member_id,
            instance=instance_id,
        )

    def _replacement_written(
        self,
        group: ClassicGroup,
        member: Member,
        request: JoinGroupRequest,
        callback: JoinCallback,
        replaced: _Replaced,
        append_error: ErrorCode,
    ) -> None:
        new_member_id = member.member_id
        if append_error is not ErrorCode.NONE:
            self._revert_replacement(group, member, request, callback, replaced, append_error)
        elif request.api_version >= 9:
            # v9+: a static leader is told it leads but must not run the assignor again.
            result = self.rebalance.join_result(
                group, new_member_id, skip_assignment=group.is_leader(new_member_id)
            )
            self.rebalance.reply_join(group, member, result)
        else:
            # Before v9: name the old leader id so the new id does not believe it leads and
            # computes an assignment a Stable group would never hand out.
            result = self.rebalance.join_result(
                group, new_member_id, with_members=False, leader_id=replaced.leader_id
            )
            self.rebalance.reply_join(group, member, result)

    def _revert_replacement(
        self,
        group: ClassicGroup,
        member: Member,
        request: JoinGroupRequest,
        callback: JoinCallback,
        replaced: _Replaced,
        append_error: ErrorCode,
    ) -> None:
        instance_id = request.group_instance_id
        assert instance_id is not None
        error = group_write_error(append_error)
        log.warning(
            "member.static_replacement_reverted",
            group=group.group_id,
            instance=instance_id,
            member=member.member_id,
            error=error.name,
        )
        group.update_member(
            member, replaced.protocols, replaced.rebalance_timeout_ms, replaced.session_timeout_ms, None
        )
        restored = group.replace_static_member(instance_id, member.member_id, replaced.old_member_id)
        self.liveness.complete_and_schedule_next_heartbeat(group, restored)
        self._send(
            callback,
            JoinGroupResult(
                UNKNOWN_MEMBER_ID,
                error,
                group.generation_id,
                group.protocol_type,
                group.protocol_name,
                replaced.leader_id,
            ),
        )
