"""Heartbeat (12): keeps a member alive and tells it when a rebalance is under way.

v1 throttle time; v2 no change; v3 group_instance_id; v4 flexible. The response body is packed with
`struct` (the hottest group API: the codec's build + encode cost more than the coordinator's work).
"""

from __future__ import annotations

import struct
from typing import Any

from broker.context import RequestContext

API_KEY = 12
VERSIONS = (0, 4)

_V0 = struct.Struct(">h")  # error_code
_V1 = struct.Struct(">ih")  # throttle_time_ms, error_code
_V4 = struct.Struct(">ihB")  # ... and an empty tagged-field section


def handle(ctx: RequestContext, request: Any) -> bytes:
    version = ctx.version
    error = ctx.broker.coordinator.heartbeat(
        request.group_id,
        request.member_id,
        request.group_instance_id if version >= 3 else None,
        request.generation_id,
    )
    if version >= 4:
        return _V4.pack(0, error, 0)
    if version >= 1:
        return _V1.pack(0, error)
    return _V0.pack(error)
