"""ConsumerGroupHeartbeat's request checks, in Kafka's order and with Kafka's messages."""

from __future__ import annotations

from collections.abc import Collection

from kafkito.broker.coordinator.consumer.requests import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerHeartbeatRequest,
)
from kafkito.broker.coordinator.consumer.subscription import compile_regex
from kafkito.protocol.errors import ErrorCode

Failure = tuple[ErrorCode, str]


def _invalid(message: str) -> Failure:
    return ErrorCode.INVALID_REQUEST, message


def _empty(value: str | None) -> bool:
    """Kafka's empty string: present, and nothing but whitespace."""
    return value is not None and not value.strip()


def validate_heartbeat(request: ConsumerHeartbeatRequest, assignors: Collection[str]) -> Failure | None:
    """The error of a malformed heartbeat, or None when it is well formed."""
    epoch = request.member_epoch
    # v1 members make their own ids (KIP-1082); before, a joining member gets one from us.
    if (request.api_version >= 1 or epoch > 0 or epoch == LEAVE_EPOCH) and _empty(request.member_id):
        return _invalid("MemberId can't be empty.")
    for value, what in (
        (request.group_id, "GroupId"),
        (request.instance_id, "InstanceId"),
        (request.rack_id, "RackId"),
    ):
        if _empty(value):
            return _invalid(f"{what} can't be empty.")
    failure = _validate_epoch(request)
    if failure is not None:
        return failure
    if request.server_assignor is not None and request.server_assignor not in assignors:
        return (
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {request.server_assignor} is not supported. "
            f"Supported assignors: {', '.join(assignors)}.",
        )
    regex = request.subscribed_topic_regex
    if regex and compile_regex(regex) is None:
        message = f"SubscribedTopicRegex `{regex}` is not a valid regular expression."
        return ErrorCode.INVALID_REGULAR_EXPRESSION, message
    return None


def _validate_epoch(request: ConsumerHeartbeatRequest) -> Failure | None:
    epoch = request.member_epoch
    if epoch == JOIN_EPOCH:
        if request.rebalance_timeout_ms == -1:
            return _invalid("RebalanceTimeoutMs must be provided in first request.")
        if request.owned_partitions is None or request.owned_partitions:
            return _invalid("TopicPartitions must be empty when (re-)joining.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            return _invalid(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
            )
    elif epoch == STATIC_LEAVE_EPOCH:
        if request.instance_id is None:
            return _invalid("InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        return _invalid("MemberEpoch is invalid.")
    return None
