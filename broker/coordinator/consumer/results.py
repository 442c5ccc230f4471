"""What the coordinator answers for consumer groups: the heartbeat result and the descriptions."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import NamedTuple

from kafkito.protocol.errors import ErrorCode

WireAssignment = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]

MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


class ConsumerHeartbeatResult(NamedTuple):
    """ConsumerGroupHeartbeat's answer; `assignment` None means unchanged since last sent (or an error)."""

    error: ErrorCode
    error_message: str | None
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: WireAssignment | None


HeartbeatCallback = Callable[[ConsumerHeartbeatResult], None]


class ConsumerMemberDescription(NamedTuple):
    """One member as ConsumerGroupDescribe shows it."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: WireAssignment
    target_assignment: WireAssignment
    member_type: int = MEMBER_TYPE_CONSUMER


class ConsumerGroupDescription(NamedTuple):
    """One group as ConsumerGroupDescribe shows it; `state` is Kafka's lower-case wire name
    ("empty", "assigning", "reconciling", "stable", "dead")."""

    group_id: str
    error: ErrorCode
    error_message: str | None
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[ConsumerMemberDescription, ...]
    authorized_operations: int = -2147483648
