"""JoinGroup (11): parked in the coordinator until the join phase completes.

v1 rebalance_timeout_ms; v2 throttle time; v3 no change; v4 MEMBER_ID_REQUIRED (KIP-394); v5
group_instance_id (KIP-345); v6 flexible; v7 protocol_type in the response, nullable protocol_name;
v8 reason; v9 skip_assignment for static leaders (KIP-814).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import JoinGroupRequest, JoinGroupResult
from kafkito.broker.handlers.parked import Parked

API_KEY = 11
VERSIONS = (0, 9)


class JoinGroupProtocol(Protocol):
    name: str
    metadata: bytes


class JoinGroupRequestBody(Protocol):
    """The fields of kafka-python's JoinGroupRequest this handler reads."""

    group_id: str | None
    member_id: str
    group_instance_id: str | None  # v5+
    rebalance_timeout_ms: int  # v1+
    session_timeout_ms: int
    protocol_type: str
    protocols: Sequence[JoinGroupProtocol]
    reason: str | None  # v8+


def handle(ctx: RequestContext, request: JoinGroupRequestBody) -> Any:
    version = ctx.version

    def build(result: JoinGroupResult) -> Any:
        return ctx.response(
            throttle_time_ms=0,
            error_code=result.error,
            generation_id=result.generation_id,
            protocol_type=result.protocol_type,
            # Before v7 the name is not nullable: "" stands for none.
            protocol_name=result.protocol_name if version >= 7 else (result.protocol_name or ""),
            leader=result.leader_id,
            skip_assignment=result.skip_assignment,
            member_id=result.member_id,
            members=[
                dict(member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata)
                for m in result.members
            ],
        )

    parked: Parked[JoinGroupResult] = Parked(build)
    join = JoinGroupRequest(
        request.group_id,
        request.member_id,
        request.group_instance_id if version >= 5 else None,
        ctx.client_id,
        "/" + ctx.peer_host,
        request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms,
        request.session_timeout_ms,
        request.protocol_type,
        [(p.name, bytes(p.metadata)) for p in request.protocols],
        api_version=version,
        reason=request.reason if version >= 8 else None,
    )
    ctx.groups.join_group(join, parked.callback)
    return parked.response()
