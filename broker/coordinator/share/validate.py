"""ShareGroupHeartbeat's checks before the group is touched, and the member epoch check, with
Kafka's errors and messages."""

from __future__ import annotations

from kafkito.broker.coordinator.share.group import ShareGroupMember
from kafkito.broker.coordinator.share.requests import LEAVE_EPOCH, ShareHeartbeatRequest
from kafkito.protocol.errors import ErrorCode

_REJOIN = "The member must abandon all its partitions and rejoin."


class HeartbeatError(Exception):
    def __init__(self, error: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def validate_heartbeat(request: ShareHeartbeatRequest) -> tuple[ErrorCode, str] | None:
    """INVALID_REQUEST for a request Kafka refuses before looking at the group (an empty member id
    is refused earlier, by the handler, without a message; a blank one here, with one)."""
    if not request.group_id:
        return ErrorCode.INVALID_REQUEST, "GroupId can't be empty."
    if request.rack_id is not None and not request.rack_id:
        return ErrorCode.INVALID_REQUEST, "RackId can't be empty."
    if not request.member_id.strip():
        return ErrorCode.INVALID_REQUEST, "MemberId can't be empty."
    if request.member_epoch < LEAVE_EPOCH:
        return (
            ErrorCode.INVALID_REQUEST,
            (f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -1."),
        )
    if request.member_epoch == 0 and not request.subscribed_topic_names:
        return ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
    return None


def check_epoch(member: ShareGroupMember, received: int) -> None:
    """A share group member must heartbeat at exactly its epoch (nothing is ever revoked, so no
    previous epoch is tolerated): FENCED_MEMBER_EPOCH otherwise."""
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The share group member has a greater member epoch ({received}) than the one known by the "
            f"group coordinator ({member.member_epoch}). {_REJOIN}",
        )
    if received < member.member_epoch:
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The share group member has a smaller member epoch ({received}) than the one known by the "
            f"group coordinator ({member.member_epoch}). {_REJOIN}",
        )
