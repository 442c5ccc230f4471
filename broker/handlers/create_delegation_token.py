"""CreateDelegationToken (38): a token for the requester, or (v3+) for another owner.

As Kafka: refused on a connection that may not ask for tokens (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), for
another owner without CREATE_TOKENS on that USER (DELEGATION_TOKEN_AUTHORIZATION_FAILED), with a renewer
that is not a User (INVALID_PRINCIPAL_TYPE); those answers carry the owner and requester and -1 times.
Then the controller's rules (`security/tokens.py`): DELEGATION_TOKEN_AUTH_DISABLED without
`delegation.token.secret.key`; the lifetime is the request's (when positive) capped by
`delegation.token.max.lifetime.ms`, the expiry `delegation.token.expiry.time.ms` after issue. The token
is durable before the answer. v1-v3 (v0 went in Kafka 4, KIP-896); v2+ flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import AclOperation, ResourceType
from kafkito.broker.security.token_requests import allow_token_requests, authorized, principal_of
from kafkito.broker.security.tokens import USER_TYPE, split_principal
from kafkito.protocol.errors import ErrorCode

API_KEY = 38
VERSIONS = (1, 3)


class Renewer(Protocol):
    principal_type: str
    principal_name: str


class CreateDelegationTokenRequest(Protocol):
    owner_principal_type: str | None  # v3+
    owner_principal_name: str | None  # v3+
    renewers: Sequence[Renewer]
    max_lifetime_ms: int


def _answer(
    ctx: RequestContext, error: int, owner: str, requester: str, times: int, token_id: str = "",
    mac: bytes = b"", issue: int | None = None, expiry: int | None = None, max_ts: int | None = None,
) -> Any:  # fmt: skip
    owner_type, owner_name = split_principal(owner)
    requester_type, requester_name = split_principal(requester)
    return ctx.response(
        error_code=error, principal_type=owner_type, principal_name=owner_name,
        token_requester_principal_type=requester_type, token_requester_principal_name=requester_name,
        issue_timestamp_ms=times if issue is None else issue,
        expiry_timestamp_ms=times if expiry is None else expiry,
        max_timestamp_ms=times if max_ts is None else max_ts,
        token_id=token_id, hmac=mac, throttle_time_ms=0,
    )  # fmt: skip


async def handle(ctx: RequestContext, request: CreateDelegationTokenRequest) -> Any:
    requester = ctx.principal
    owner = requester
    if ctx.version >= 3 and request.owner_principal_name:
        owner = principal_of(request.owner_principal_type, request.owner_principal_name)
    renewers = [principal_of(r.principal_type, r.principal_name) for r in request.renewers]
    if not allow_token_requests(ctx):
        return _answer(ctx, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester, -1)
    if owner != requester and not authorized(ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, owner):
        return _answer(ctx, ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester, -1)
    if any(r.principal_type != USER_TYPE for r in request.renewers):
        return _answer(ctx, ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester, -1)
    created = ctx.security.create_token(
        owner, requester, renewers, request.max_lifetime_ms, ctx.groups.clock.now_ms()
    )
    token = created.token
    if token is None:  # the controller's refusals leave the times at their defaults
        return _answer(ctx, created.error, owner, requester, 0)
    await ctx.security.synced()
    return _answer(
        ctx, ErrorCode.NONE, owner, requester, 0, token.token_id, created.hmac,
        token.issue_ms, token.expiry_ms, token.max_ms,
    )  # fmt: skip
