"""FindCoordinator (10): this broker coordinates every group and every transactional id.

v1 adds key_type (0 group, 1 transaction), throttle time and error message; v2 no change; v3 flexible;
v4 batches keys (coordinator_keys -> coordinators, KIP-699); v5 and v6 no change on the wire.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 10
VERSIONS = (0, 6)

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1


class FindCoordinatorRequestBody(Protocol):
    """The fields of kafka-python's FindCoordinatorRequest this handler reads."""

    key_type: int  # v1+
    coordinator_keys: Sequence[str]  # v4+


def handle(ctx: RequestContext, request: FindCoordinatorRequestBody) -> Any:
    key_type = request.key_type if ctx.version >= 1 else GROUP_KEY_TYPE
    # There is one broker: it is the coordinator for every group and every transactional id.
    error = (
        ErrorCode.NONE if key_type in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE) else ErrorCode.INVALID_REQUEST
    )
    message = None if error is ErrorCode.NONE else f"unknown coordinator key type {key_type}"
    # A group's coordinator needs `__consumer_offsets`: Kafka creates it here, on first use.
    if key_type == GROUP_KEY_TYPE and not ctx.topics.ensure_offsets_topic():
        error, message = ErrorCode.COORDINATOR_NOT_AVAILABLE, "__consumer_offsets could not be created"
    ok = error is ErrorCode.NONE
    node_id = ctx.cluster.node_id if ok else -1
    host, port = ctx.cluster.advertised if ok else ("", -1)
    if ctx.version >= 4:
        return ctx.response(
            throttle_time_ms=0,
            coordinators=[
                dict(key=key, node_id=node_id, host=host, port=port, error_code=error, error_message=message)
                for key in request.coordinator_keys
            ],
        )
    return ctx.response(
        throttle_time_ms=0, error_code=error, error_message=message, node_id=node_id, host=host, port=port
    )
