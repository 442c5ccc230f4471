"""Share sessions (KIP-932): per (group, member), the partitions a member fetches and the epoch its next
request must carry. Epoch 0 opens a session (replacing the member's old one), -1 closes it, any other
must equal the session's next epoch, which then moves on by one (after INT32_MAX back to 1)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafkito.protocol.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

TopicPartition = tuple[uuid.UUID, int]


@dataclass(slots=True)
class ShareSession:
    group_id: str
    member_id: str
    next_epoch: int = 1
    partitions: dict[TopicPartition, None] = field(default_factory=dict)  # insertion-ordered set


class ShareSessionError(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


class ShareSessions:
    """The broker's share sessions (Kafka's ShareSessionCache), bounded by `max_sessions`: a new
    session beyond it evicts the least recently used one (a member gone without closing its own)."""

    def __init__(self, max_sessions: int = 1000) -> None:
        self.max_sessions = max_sessions  # Kafka: group.share.max.share.sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open(self, group_id: str, member_id: str) -> tuple[ShareSession, list[ShareSession]]:
        """Epoch 0: a fresh session. Returned with it: the sessions whose acquired records must go back
        (the member's previous one, and the least recently used one when the cache is full)."""
        key = (group_id, member_id)
        gone: list[ShareSession] = []
        old = self.sessions.pop(key, None)
        if old is not None:
            gone.append(old)
        if len(self.sessions) >= self.max_sessions:
            if self.max_sessions <= 0:
                full = "The share session cache is full."
                raise ShareSessionError(ErrorCode.SHARE_SESSION_LIMIT_REACHED, full)
            oldest = next(iter(self.sessions))
            gone.append(self.sessions.pop(oldest))
        session = self.sessions[key] = ShareSession(group_id, member_id)
        return session, gone

    def use(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """A request with epoch > 0 (or -1): its session, checked; the epoch moves on for > 0."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise ShareSessionError(
                ErrorCode.SHARE_SESSION_NOT_FOUND, f"Share session for member {member_id} not found."
            )
        if epoch == FINAL_EPOCH:
            return session
        if epoch != session.next_epoch:
            raise ShareSessionError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                f"The share session epoch {epoch} is not the expected {session.next_epoch}.",
            )
        session.next_epoch = 1 if session.next_epoch >= _MAX_EPOCH else session.next_epoch + 1
        self.sessions[group_id, member_id] = self.sessions.pop((group_id, member_id))  # most recently used
        return session

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def of_member(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))
