"""SASL PLAIN (RFC 4616): `[authzid] NUL user NUL password`, checked against JAAS `user_<name>` options."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from kafkito.broker.auth.mechanisms import AuthenticationFailed

_INVALID = "Authentication failed: Invalid username or password"


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.complete = False
        self.authorization_id = ""
        self.lifetime_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise AuthenticationFailed("Authentication failed: PLAIN exchange already completed")
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise AuthenticationFailed(
                "Invalid SASL/PLAIN response: expected 3 tokens, got " + str(len(parts))
            )
        try:
            authzid, user, password = (p.decode("utf-8") for p in parts)
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid SASL/PLAIN response: not UTF-8") from None
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified", user)
        expected = self._users.get(user)
        # compare_digest on equal-length digests: no early exit on the first different character
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed(_INVALID, user)
        if authzid and authzid != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username",
                user,
            )
        self.authorization_id = user
        self.complete = True
        return b""
