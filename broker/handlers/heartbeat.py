"""Heartbeat (12): keeps a member alive and tells it when a rebalance is under way.

v1 throttle time; v2 no change; v3 group_instance_id; v4 flexible.
"""

from __future__ import annotations

from typing import Any

from broker.context import RequestContext

API_KEY = 12
VERSIONS = (0, 4)


def handle(ctx: RequestContext, request: Any) -> Any:
    error = ctx.broker.coordinator.heartbeat(
        request.group_id,
        request.member_id,
        request.group_instance_id if ctx.version >= 3 else None,
        request.generation_id,
    )
    return ctx.response(throttle_time_ms=0, error_code=error)
