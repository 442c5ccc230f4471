"""What ShareGroupHeartbeat hands the coordinator and what it answers (KIP-932)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkito.broker.coordinator.share.records import Assignment
from kafkito.protocol.errors import ErrorCode

LEAVE_EPOCH = -1


class ShareHeartbeatRequest(NamedTuple):
    group_id: str
    member_id: str
    member_epoch: int  # 0 joins, -1 leaves
    rack_id: str | None
    subscribed_topic_names: tuple[str, ...] | None  # None: unchanged
    client_id: str
    client_host: str


class ShareHeartbeatResult(NamedTuple):
    error: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None  # None: unchanged since last sent


ShareHeartbeatCallback = Callable[[ShareHeartbeatResult], None]


def failure(error: ErrorCode, message: str | None = None) -> ShareHeartbeatResult:
    return ShareHeartbeatResult(error, message)
