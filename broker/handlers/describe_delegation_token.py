"""DescribeDelegationToken (41): the tokens of the owners named (null: every owner), with their HMACs.

As Kafka's KafkaApis: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on a connection that may not ask for tokens,
DELEGATION_TOKEN_AUTH_DISABLED without `delegation.token.secret.key`, nothing for an empty owner list.
A token is listed when the owners named include its owner, requester or a renewer, and the principal
is its owner, requester or renewer, or may DESCRIBE the DELEGATION_TOKEN (its id) or DESCRIBE_TOKENS on
the owner's USER. Tokens past their expiry are listed until the sweep removes them. v1-v3; v2+ flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import AclOperation, ResourceType
from kafkito.broker.security.token_requests import allow_token_requests, authorized, principal_of
from kafkito.broker.security.tokens import TokenInfo, split_principal
from kafkito.protocol.errors import ErrorCode

API_KEY = 41
VERSIONS = (1, 3)


class Owner(Protocol):
    principal_type: str
    principal_name: str


class DescribeDelegationTokenRequest(Protocol):
    owners: Sequence[Owner] | None


def _eligible(ctx: RequestContext, owners: list[str] | None, token: TokenInfo) -> bool:
    if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
        return False
    if token.owner_or_renewer(ctx.principal):
        return True
    return authorized(
        ctx, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id
    ) or authorized(ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, token.owner)


def _described(ctx: RequestContext, token: TokenInfo) -> dict[str, Any]:
    owner_type, owner_name = split_principal(token.owner)
    requester_type, requester_name = split_principal(token.requester)
    return dict(
        principal_type=owner_type, principal_name=owner_name,
        token_requester_principal_type=requester_type, token_requester_principal_name=requester_name,
        issue_timestamp=token.issue_ms, expiry_timestamp=token.expiry_ms, max_timestamp=token.max_ms,
        token_id=token.token_id, hmac=ctx.security.token_hmac_of(token),
        renewers=[dict(zip(("principal_type", "principal_name"), split_principal(r), strict=True))
                  for r in token.renewers],
    )  # fmt: skip


def handle(ctx: RequestContext, request: DescribeDelegationTokenRequest) -> Any:
    tokens: list[dict[str, Any]] = []
    if not allow_token_requests(ctx):
        error = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    elif not ctx.configs.config.delegation_token_secret_key:
        error = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    else:
        error = ErrorCode.NONE
        owners = None if request.owners is None else [
            principal_of(o.principal_type, o.principal_name) for o in request.owners
        ]  # fmt: skip
        if owners != []:
            found = ctx.security.tokens.matching(lambda t: _eligible(ctx, owners, t))
            tokens = [_described(ctx, t) for t in found]
    return ctx.response(error_code=error, tokens=tokens, throttle_time_ms=0)
