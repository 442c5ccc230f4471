"""ShareGroupHeartbeat (76, KIP-932): a share consumer joins, heartbeats or leaves its share group.

Kafka 4.1 made v1 the first stable version (v0 was 4.0's early access, no longer accepted). The
member id is the client's own (a UUID). The answer goes out once the records the heartbeat wrote are
in `__consumer_offsets`; the assignment is sent on a join and whenever it changed. With
`share.version` finalized at 0 (UpdateFeatures) share groups are off: UNSUPPORTED_VERSION, as Kafka.
An empty member id is INVALID_REQUEST without a message, before any other check of the request, as
Kafka 4.4 answers it (a blank one gets the coordinator's "MemberId can't be empty.").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.share.requests import ShareHeartbeatRequest, ShareHeartbeatResult
from kafkito.broker.features import SHARE_VERSION
from kafkito.broker.handlers.parked import Parked
from kafkito.protocol.errors import ErrorCode

API_KEY = 76
VERSIONS = (1, 1)


class ShareGroupHeartbeatRequestBody(Protocol):
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: Sequence[str] | None


# Kafka refuses an empty member id before its coordinator sees the request: no message.
_NO_MEMBER_ID = ShareHeartbeatResult(ErrorCode.INVALID_REQUEST, None)
# As Kafka with `share.version` at 0: share groups are off.
_SHARE_GROUPS_OFF = ShareHeartbeatResult(
    ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported."
)


def share_groups_off(ctx: RequestContext) -> bool:
    """`share.version` finalized at 0: every share-group API answers UNSUPPORTED_VERSION, as Kafka."""
    return ctx.configs.features.levels.get(SHARE_VERSION, 0) < 1


def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequestBody) -> Any:
    def build(result: ShareHeartbeatResult) -> Any:
        assignment = None
        if result.assignment is not None:
            assignment = dict(
                topic_partitions=[dict(topic_id=t, partitions=list(p)) for t, p in result.assignment]
            )
        return ctx.response(
            throttle_time_ms=0,
            error_code=result.error,
            error_message=result.error_message,
            member_id=result.member_id,
            member_epoch=result.member_epoch,
            heartbeat_interval_ms=result.heartbeat_interval_ms,
            assignment=assignment,
        )

    if share_groups_off(ctx):
        return build(_SHARE_GROUPS_OFF)
    if not request.member_id:
        return build(_NO_MEMBER_ID)
    names = request.subscribed_topic_names
    heartbeat = ShareHeartbeatRequest(
        request.group_id,
        request.member_id,
        request.member_epoch,
        request.rack_id,
        tuple(names) if names is not None else None,
        ctx.client_id or "",
        "/" + ctx.peer_host,
    )
    parked: Parked[ShareHeartbeatResult] = Parked(build)
    ctx.groups.share_group_heartbeat(heartbeat, parked.callback)
    return parked.response()
