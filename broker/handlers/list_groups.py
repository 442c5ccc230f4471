"""ListGroups (16): every group, filtered by state and type (both case-insensitive).

v1 throttle time; v2 no change; v3 flexible; v4 states filter and group_state (KIP-518);
v5 types filter and group_type (KIP-848): `classic`, or `consumer` for a KIP-848 consumer group, whose
protocol type is `consumer` too (the coordinator lists both types).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 16
VERSIONS = (0, 5)


class ListGroupsRequestBody(Protocol):
    """The fields of kafka-python's ListGroupsRequest this handler reads."""

    states_filter: Sequence[str] | None  # v4+
    types_filter: Sequence[str] | None  # v5+


def handle(ctx: RequestContext, request: ListGroupsRequestBody) -> Any:
    states = request.states_filter if ctx.version >= 4 else ()
    types = request.types_filter if ctx.version >= 5 else ()
    error, overviews = ctx.groups.list_groups(states or (), types or ())
    return ctx.response(
        throttle_time_ms=0,
        error_code=error,
        groups=[
            dict(
                group_id=g.group_id,
                protocol_type=g.protocol_type,
                group_state=g.state,
                group_type=g.group_type,
            )
            for g in overviews
        ],
    )
