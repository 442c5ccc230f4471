"""LeaveGroup (13): members leave (or an admin removes static members by instance id).

v1 throttle time; v2 no change; v3 a batch of members with per-member errors (KIP-345); v4 flexible;
v5 a reason per member. Before v3 the one member's error is the top-level error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import LeavingMember
from kafkito.protocol.errors import ErrorCode

API_KEY = 13
VERSIONS = (0, 5)


class LeaveGroupMember(Protocol):
    member_id: str
    group_instance_id: str | None
    reason: str | None  # v5+


class LeaveGroupRequestBody(Protocol):
    """The fields of kafka-python's LeaveGroupRequest this handler reads."""

    group_id: str | None
    member_id: str  # before v3
    members: Sequence[LeaveGroupMember]  # v3+


def handle(ctx: RequestContext, request: LeaveGroupRequestBody) -> Any:
    version = ctx.version
    if version >= 3:
        leaving = [
            LeavingMember(m.member_id, m.group_instance_id, m.reason if version >= 5 else None)
            for m in request.members
        ]
    else:
        leaving = [LeavingMember(request.member_id)]
    result = ctx.groups.leave_group(request.group_id, leaving)
    if version < 3:
        error = result.error
        if error is ErrorCode.NONE:
            error = next((m.error for m in result.members if m.error is not ErrorCode.NONE), ErrorCode.NONE)
        return ctx.response(throttle_time_ms=0, error_code=error)
    return ctx.response(
        throttle_time_ms=0,
        error_code=result.error,
        members=[
            dict(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error)
            for m in result.members
        ],
    )
