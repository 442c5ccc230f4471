"""SyncGroup (14): the leader's assignment in, each member's share out (followers park until stored).

v1 throttle time; v2 no change; v3 group_instance_id; v4 flexible; v5 protocol_type and protocol_name,
mandatory in requests and checked against the group (KIP-559).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import SyncGroupRequest, SyncGroupResult
from kafkito.broker.handlers.parked import Parked
from kafkito.protocol.errors import ErrorCode

API_KEY = 14
VERSIONS = (0, 5)


class SyncGroupAssignment(Protocol):
    member_id: str
    assignment: bytes


class SyncGroupRequestBody(Protocol):
    """The fields of kafka-python's SyncGroupRequest this handler reads."""

    group_id: str | None
    generation_id: int
    member_id: str
    group_instance_id: str | None  # v3+
    protocol_type: str | None  # v5+
    protocol_name: str | None  # v5+
    assignments: Sequence[SyncGroupAssignment]


def handle(ctx: RequestContext, request: SyncGroupRequestBody) -> Any:
    version = ctx.version

    def build(result: SyncGroupResult) -> Any:
        return ctx.response(
            throttle_time_ms=0,
            error_code=result.error,
            protocol_type=result.protocol_type,
            protocol_name=result.protocol_name,
            assignment=result.assignment,
        )

    protocol_type = request.protocol_type if version >= 5 else None
    protocol_name = request.protocol_name if version >= 5 else None
    if version >= 5 and (protocol_type is None or protocol_name is None):
        return build(SyncGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
    parked: Parked[SyncGroupResult] = Parked(build)
    sync = SyncGroupRequest(
        request.group_id,
        request.generation_id,
        request.member_id,
        request.group_instance_id if version >= 3 else None,
        protocol_type,
        protocol_name,
        {a.member_id: bytes(a.assignment) for a in request.assignments},
    )
    ctx.groups.sync_group(sync, parked.callback)
    return parked.response()
