"""The error a security-store operation answers with: a Kafka error code and its message."""

from __future__ import annotations

from kafkito.protocol.errors import ErrorCode


class SecurityError(Exception):
    """A refused ACL, quota or credential change (or filter), as Kafka's ApiError carries it."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"SecurityError({self.code.name}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecurityError) and (other.code, other.message) == (self.code, self.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))


def invalid_request(message: str) -> SecurityError:
    return SecurityError(ErrorCode.INVALID_REQUEST, message)
