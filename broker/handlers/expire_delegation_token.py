"""ExpireDelegationToken (40): move a token's expiry to now + the period (never past its max time), or
with a negative period remove it at once (answered with now + that period, as Kafka 4.4 does).

The same refusals as RenewDelegationToken, in the same order (owner or renewer only). v1-v2; v2
flexible.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.token_requests import allow_token_requests
from kafkito.protocol.errors import ErrorCode

API_KEY = 40
VERSIONS = (1, 2)


class ExpireDelegationTokenRequest(Protocol):
    hmac: bytes
    expiry_time_period_ms: int


async def handle(ctx: RequestContext, request: ExpireDelegationTokenRequest) -> Any:
    error: int
    if not allow_token_requests(ctx):
        error, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1
    else:
        now = ctx.groups.clock.now_ms()
        error, expiry = ctx.security.expire_token(
            bytes(request.hmac), request.expiry_time_period_ms, ctx.principal, now
        )
        await ctx.security.synced()
    return ctx.response(error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0)
