"""ShareAcknowledge (79): a share group member's acknowledgements through its share session (KIP-932).

The session must exist (SHARE_SESSION_NOT_FOUND); epoch 0 cannot acknowledge
(INVALID_SHARE_SESSION_EPOCH); -1 acknowledges and then closes the session, releasing what the member
still holds; any other epoch must be the session's next. Each partition's acknowledgements apply all
or none (INVALID_RECORD_STATE for a record the member does not hold). v2: renew acknowledgements
(`is_renew_ack`) and the lock duration in the answer. As Kafka 4.4: an empty member id is
INVALID_REQUEST, the group id is not checked, and a request-level error carries no message (share
groups being off keeps its own).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.broker.share.answers import AckTopicField, apply_acks, by_topic, error_message
from kafkito.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSessionError
from kafkito.protocol.errors import DEFAULT_MESSAGES, ErrorCode

API_KEY = 79
VERSIONS = (1, 2)


class ShareAcknowledgeRequest(Protocol):
    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    topics: Sequence[AckTopicField]
    # v2: is_renew_ack (bool), read with getattr


def _response(ctx: RequestContext, error: ErrorCode, responses: list[Any], lock_ms: int) -> Any:
    message = DEFAULT_MESSAGES[error] if error is ErrorCode.UNSUPPORTED_VERSION else None
    fields: dict[str, Any] = {
        "throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": responses,
        "node_endpoints": [],
    }  # fmt: skip
    if ctx.version >= 2:
        fields["acquisition_lock_timeout_ms"] = lock_ms
    return ctx.response(**fields)


def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> Any:
    group_id, member_id, epoch = request.group_id, request.member_id, request.share_session_epoch
    if not member_id:
        return _response(ctx, ErrorCode.INVALID_REQUEST, [], 0)
    if share_groups_off(ctx):
        return _response(ctx, ErrorCode.UNSUPPORTED_VERSION, [], 0)
    group_id = group_id or ""
    manager = ctx.share
    lock_ms = manager.lock_duration(group_id)
    if epoch == INITIAL_EPOCH:  # a share acknowledge cannot open a share session
        return _response(ctx, ErrorCode.INVALID_SHARE_SESSION_EPOCH, [], lock_ms)
    try:
        session = manager.sessions.use(group_id, member_id, epoch)
    except ShareSessionError as exc:
        return _response(ctx, exc.error, [], lock_ms)
    renew = bool(getattr(request, "is_renew_ack", False))
    acks = apply_acks(manager, group_id, member_id, request.topics, renew)
    if epoch == FINAL_EPOCH:
        manager.release_session(session)
        manager.sessions.close(group_id, member_id)
    leader = {"leader_id": 0, "leader_epoch": 0}  # as Kafka: the defaults, set only on a leader error
    entries: list[tuple[uuid.UUID, dict[str, Any]]] = [
        (
            topic_id,
            {
                "partition_index": partition,
                "error_code": error,
                "error_message": error_message(error),
                "current_leader": leader,
            },
        )
        for (topic_id, partition), error in acks.items()
    ]
    return _response(ctx, ErrorCode.NONE, by_topic(entries), lock_ms)
