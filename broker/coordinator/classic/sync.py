"""SyncGroup for classic groups: followers park, the leader's assignment is written, then all answer."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.snapshot import group_record
from kafkito.broker.coordinator.classic.state import GroupState, IllegalGroupStateError
from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.records import CoordinatorResult
from kafkito.broker.coordinator.requests import SyncGroupRequest
from kafkito.broker.coordinator.results import SyncCallback, SyncGroupResult
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.heartbeat import Liveness
    from kafkito.broker.coordinator.classic.rebalance import Rebalance
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class Sync:
    """The SyncGroup path of classic groups."""

    __slots__ = ("liveness", "rebalance", "rt")

    def __init__(self, rt: Runtime, rebalance: Rebalance, liveness: Liveness) -> None:
        self.rt = rt
        self.rebalance = rebalance
        self.liveness = liveness

    def sync_group(self, request: SyncGroupRequest, callback: SyncCallback) -> None:
        send = self.rt.outbox.send
        group = self._find(request)
        if isinstance(group, ErrorCode):
            send(callback, SyncGroupResult(group))
            return
        member_id = request.member_id
        state = group.state
        if state is GroupState.EMPTY:
            send(callback, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif state is GroupState.PREPARING_REBALANCE:
            send(callback, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif state is GroupState.COMPLETING_REBALANCE:
            member = group.get(member_id)
            # A second SyncGroup for the same member replaces the first, which must still get an answer.
            self.rebalance.reply_sync(member, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            member.sync_callback = callback
            self.rebalance.remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self._write_assignment(group, request.generation_id, member_id, request.assignments)
        elif state is GroupState.STABLE:
            member = group.get(member_id)
            self.rebalance.remove_pending_sync_member(group, member_id)
            send(
                callback,
                SyncGroupResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment),
            )
            self.liveness.complete_and_schedule_next_heartbeat(group, member)
        else:
            raise IllegalGroupStateError(f"SyncGroup reached group {group.group_id} in {state}")

    def _find(self, request: SyncGroupRequest) -> ClassicGroup | ErrorCode:
        """The group to sync with, or the error to answer (no group at all: UNKNOWN_MEMBER_ID)."""
        error = self.rt.validate_group_status(request.group_id, allow_empty_id=False)
        if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance state is lost while loading; older clients do not expect error 14 here.
            return ErrorCode.REBALANCE_IN_PROGRESS
        if error is not None:
            return error
        group = self.rt.groups.get(request.group_id)  # type: ignore[arg-type]
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        error = self._validate(group, request)
        return group if error is None else error

    @staticmethod
    def _validate(group: ClassicGroup, request: SyncGroupRequest) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(request.member_id, request.group_instance_id)
        if error is not None:
            return error
        if request.generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if request.protocol_type is not None and request.protocol_type != group.protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if request.protocol_name is not None and request.protocol_name != group.protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _write_assignment(
        self, group: ClassicGroup, generation_id: int, leader_id: str, assignments: Mapping[str, bytes]
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
        respond = partial(self._assignment_written, group, generation_id, leader_id, assignment)
        self.rt.write(CoordinatorResult(group.group_id, [group_record(group, assignment)], respond))

    def _assignment_written(
        self,
        group: ClassicGroup,
        generation_id: int,
        leader_id: str,
        assignment: Mapping[str, bytes],
        append_error: ErrorCode,
    ) -> None:
        # Another member may have joined meanwhile: only the same generation, still completing, counts.
        if not (group.is_(GroupState.COMPLETING_REBALANCE) and generation_id == group.generation_id):
            return
        if append_error is not ErrorCode.NONE:
            error = group_write_error(append_error)
            self.rebalance.reset_and_propagate_assignment_error(group, error)
            self.rebalance.maybe_prepare_rebalance(
                group, f"error {error.name} storing group assignment during SyncGroup (leader {leader_id})"
            )
        else:
            self.rebalance.set_and_propagate_assignment(group, assignment)
            self.rt.transition(group, GroupState.STABLE, f"assignment of leader {leader_id} stored")
