"""DescribeGroups (15): state, protocol and members of groups; unknown groups are reported Dead.

v1 throttle time; v2 no change; v3 authorized operations (KIP-430); v4 group_instance_id of members;
v5 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 15
VERSIONS = (0, 5)

# No authorizer: every group operation is allowed: READ (3), DELETE (6), DESCRIBE (8), as bit numbers
# of the bitfield (the codec takes a set of them; None encodes Kafka's "not requested", INT32_MIN).
GROUP_OPERATIONS = frozenset({3, 6, 8})


class DescribeGroupsRequestBody(Protocol):
    """The fields of kafka-python's DescribeGroupsRequest this handler reads."""

    groups: Sequence[str]
    include_authorized_operations: bool  # v3+


def handle(ctx: RequestContext, request: DescribeGroupsRequestBody) -> Any:
    operations = None
    if ctx.version >= 3 and request.include_authorized_operations:
        operations = set(GROUP_OPERATIONS)
    groups = [
        dict(
            error_code=d.error,
            group_id=d.group_id,
            group_state=d.summary.state,
            protocol_type=d.summary.protocol_type,
            protocol_data=d.summary.protocol,
            members=[
                dict(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata,
                    member_assignment=m.assignment,
                )
                for m in d.summary.members
            ],
            authorized_operations=operations,
        )
        for d in ctx.groups.describe_groups(request.groups)
    ]
    return ctx.response(throttle_time_ms=0, groups=groups)
