"""FindCoordinator (10): the node coordinating a group or transactional id (this one, unless the broker
runs a cluster: then the leader of the key's partition of `__consumer_offsets` or `__transaction_state`).

v1 adds key_type (0 group, 1 transaction), throttle time and error message; v2 no change; v3 flexible;
v4 batches keys (coordinator_keys -> coordinators, KIP-699); v5 and v6 no change on the wire.

As Kafka: the internal topic of the key type is created on its first use here (`__consumer_offsets`
for a group, `__transaction_state` for a transactional id). v1-v3 always carry a message, the error's
name on success ("NONE"); from v4 a key's entry has a message only when its key type is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
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
    error, message = _internal_topic(ctx, key_type)
    keys = request.coordinator_keys if ctx.version >= 4 else [request.key]
    found = [_coordinator(ctx, key, key_type, error, message) for key in keys]
    if ctx.version >= 4:
        for entry in found:
            if entry["error_code"] != ErrorCode.INVALID_REQUEST:
                entry["error_message"] = None
        return ctx.response(throttle_time_ms=0, coordinators=found)
    answer = found[0]
    del answer["key"]
    if answer["error_code"] == ErrorCode.NONE:
        answer["error_message"] = ErrorCode.NONE.name
    return ctx.response(throttle_time_ms=0, **answer)


def _internal_topic(ctx: RequestContext, key_type: int) -> tuple[ErrorCode, str | None]:
    """The key type's coordinator topic, created on first use as Kafka does; an error when the key
    type is unknown or the topic cannot be created."""
    if key_type == GROUP_KEY_TYPE:
        if ctx.topics.ensure_offsets_topic():
            return ErrorCode.NONE, None
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, "__consumer_offsets could not be created"
    if key_type == TRANSACTION_KEY_TYPE:
        try:
            ctx.transactions.ensure_state_topic()
        except (LogError, OSError):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "__transaction_state could not be created"
        return ErrorCode.NONE, None
    return ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}"


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
