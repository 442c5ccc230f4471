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


def validate_heartbeat(request: ConsumerHeartbeatRequest, assignors: Collection[str]) -> Failure | None:
    """The error of a malformed heartbeat, or None when it is well formed."""
    if not request.group_id:
        return _invalid("GroupId can't be empty.")
    if request.instance_id == "":
        return _invalid("InstanceId can't be empty.")
    if request.rack_id == "":
        return _invalid("RackId can't be empty.")
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
        return _validate_join(request)
    if epoch > 0 or epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
        if not request.member_id:
            return _invalid("MemberId can't be empty.")
        if epoch == STATIC_LEAVE_EPOCH and request.instance_id is None:
            return _invalid("InstanceId can't be null.")
        return None
    return _invalid("MemberEpoch is invalid.")


def _validate_join(request: ConsumerHeartbeatRequest) -> Failure | None:
    if request.api_version >= 1 and not request.member_id:
        return _invalid("MemberId can't be empty.")
    if request.rebalance_timeout_ms == -1:
        return _invalid("RebalanceTimeoutMs must be provided in first request.")
    if request.owned_partitions is None or request.owned_partitions:
        return _invalid("TopicPartitions must be empty when (re-)joining.")
    if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
        return _invalid(
            "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
        )
    return None
