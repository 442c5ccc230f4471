"""LeaveGroup for classic groups: members leave, or an admin removes static members by instance id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.results import (
    UNKNOWN_MEMBER_ID,
    LeaveGroupResult,
    LeaveMemberResult,
    LeavingMember,
)
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.heartbeat import Liveness
    from kafkito.broker.coordinator.classic.rebalance import Rebalance
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class Leave:
    """The LeaveGroup path of classic groups (a batch since v3)."""

    __slots__ = ("liveness", "rebalance", "rt")

    def __init__(self, rt: Runtime, rebalance: Rebalance, liveness: Liveness) -> None:
        self.rt = rt
        self.rebalance = rebalance
        self.liveness = liveness

    def leave_group(self, group_id: str | None, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        error = self.rt.validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return LeaveGroupResult(error)
        group = self.rt.groups.get(group_id)  # type: ignore[arg-type]
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

    def _leave_one(self, group: ClassicGroup, leaving: LeavingMember) -> ErrorCode:
        reason = leaving.reason or "not provided"
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            instance_id = leaving.group_instance_id
            current = group.static_member_id(instance_id) if instance_id is not None else None
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove(group, current, f"static member removed by LeaveGroup; reason: {reason}")
            return ErrorCode.NONE
        if group.is_pending_member(leaving.member_id):
            log.info("member.pending_left", group=group.group_id, member=leaving.member_id)
            self.rebalance.remove_pending_member_and_update_group(group, leaving.member_id)
            self.liveness.check_session(group, leaving.member_id)
            return ErrorCode.NONE
        error = group.validate_member(leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        self._remove(group, leaving.member_id, f"member left by LeaveGroup; reason: {reason}")
        return ErrorCode.NONE

    def _remove(self, group: ClassicGroup, member_id: str, reason: str) -> None:
        self.rebalance.remove_member_and_update_group(group, group.get(member_id), reason)
        self.liveness.check_session(group, member_id)
