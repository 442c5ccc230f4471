"""FindCoordinator (10): the node coordinating a group or transactional id (this one, unless the broker
runs a cluster: then the leader of the key's partition of `__consumer_offsets` or `__transaction_state`).

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

    key: str  # v0-3
    key_type: int  # v1+
    coordinator_keys: Sequence[str]  # v4+


def handle(ctx: RequestContext, request: FindCoordinatorRequestBody) -> Any:
    key_type = request.key_type if ctx.version >= 1 else GROUP_KEY_TYPE
    error = (
        ErrorCode.NONE if key_type in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE) else ErrorCode.INVALID_REQUEST
    )
    message = None if error is ErrorCode.NONE else f"unknown coordinator key type {key_type}"
    # A group's coordinator needs `__consumer_offsets`: Kafka creates it here, on first use.
    if key_type == GROUP_KEY_TYPE and not ctx.topics.ensure_offsets_topic():
        error, message = ErrorCode.COORDINATOR_NOT_AVAILABLE, "__consumer_offsets could not be created"
    keys = request.coordinator_keys if ctx.version >= 4 else [request.key]
    found = [_coordinator(ctx, key, key_type, error, message) for key in keys]
    if ctx.version >= 4:
        return ctx.response(throttle_time_ms=0, coordinators=found)
    answer = found[0]
    del answer["key"]
    return ctx.response(throttle_time_ms=0, **answer)


def _coordinator(
    ctx: RequestContext, key: str, key_type: int, error: ErrorCode, message: str | None
) -> dict[str, Any]:
    """One key's coordinator: this node when it runs alone; in a cluster, the leader of the key's
    `__consumer_offsets` (`__transaction_state`) partition, COORDINATOR_NOT_AVAILABLE while it has none."""
    cluster = ctx.cluster
    node_id = -1
    if error is ErrorCode.NONE:
        topology = cluster.topology
        if topology.single:
            node_id = cluster.node_id
        elif key_type == GROUP_KEY_TYPE:
            node_id = topology.group_coordinator_of(key)
        else:
            node_id = topology.transaction_coordinator_of(key)
        if node_id < 0:
            error, message = ErrorCode.COORDINATOR_NOT_AVAILABLE, "the coordinator's partition has no leader"
    host, port = cluster.endpoint(node_id, ctx.listener) if node_id >= 0 else ("", -1)
    return dict(key=key, node_id=node_id, host=host, port=port, error_code=error, error_message=message)
