"""RenewDelegationToken (39): move a token's expiry to now + the period (the request's when positive,
capped by `delegation.token.expiry.time.ms`), never past its max time.

The token is found by its HMAC. As Kafka: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (expiry -1) on a
connection that may not ask for tokens; then the controller's DELEGATION_TOKEN_AUTH_DISABLED,
DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_EXPIRED (past its expiry or max time, not yet swept) and
DELEGATION_TOKEN_OWNER_MISMATCH (neither owner nor renewer), with expiry 0. v1-v2; v2 flexible.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.token_requests import allow_token_requests
from kafkito.protocol.errors import ErrorCode

API_KEY = 39
VERSIONS = (1, 2)


class RenewDelegationTokenRequest(Protocol):
    hmac: bytes
    renew_period_ms: int


async def handle(ctx: RequestContext, request: RenewDelegationTokenRequest) -> Any:
    error: int
    if not allow_token_requests(ctx):
        error, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1
    else:
        now = ctx.groups.clock.now_ms()
        error, expiry = ctx.security.renew_token(
            bytes(request.hmac), request.renew_period_ms, ctx.principal, now
        )
        await ctx.security.synced()
    return ctx.response(error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0)
