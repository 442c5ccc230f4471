"""SaslHandshake (17) where no SASL exchange is possible: on a PLAINTEXT or SSL listener, or on a SASL
connection already authenticated without re-authentication enabled. Kafka answers ILLEGAL_SASL_STATE.

On a SASL listener the exchange itself is the connection's (`broker/auth/gate.py`): these requests
reach this handler only once it is over. v1 is the same as v0 (followed by SaslAuthenticate).
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 17
VERSIONS = (0, 1)


class SaslHandshakeRequest(Protocol):
    mechanism: str


def handle(ctx: RequestContext, request: SaslHandshakeRequest) -> Any:
    return ctx.response(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
