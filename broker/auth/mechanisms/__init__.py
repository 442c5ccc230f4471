"""SASL server mechanisms: each is fed the client's tokens and answers the next challenge, until it is
complete (its `authorization_id` is the user) or raises `AuthenticationFailed`."""

from __future__ import annotations

from typing import Protocol


class AuthenticationFailed(Exception):
    """The exchange failed; the message is what the client is told (it never holds a secret)."""

    def __init__(self, message: str, user: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.user = user


class SaslServer(Protocol):
    mechanism: str
    complete: bool
    authorization_id: str  # once complete
    lifetime_ms: int | None  # once complete: the credential's own expiry (OAUTHBEARER), if any

    def evaluate(self, token: bytes) -> bytes:
        """The challenge answering `token` (b"" when there is none); AuthenticationFailed if refused."""
        ...
