"""SaslAuthenticate (36) where no SASL exchange is under way (see sasl_handshake.py): ILLEGAL_SASL_STATE,
as Kafka answers it. v1 session lifetime; v2 flexible."""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 36
VERSIONS = (0, 2)


class SaslAuthenticateRequest(Protocol):
    auth_bytes: bytes


def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> Any:
    return ctx.response(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )
