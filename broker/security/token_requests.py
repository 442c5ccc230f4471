"""Who may use the delegation token APIs, as Kafka's request handlers decide it before the controller
sees a token request: never on a PLAINTEXT listener, on an SSL one without a client certificate, or on
a connection that authenticated with a token itself (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); and the ACL
checks on USER and DELEGATION_TOKEN resources (every check passes on a broker without an authorizer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkito.broker.listeners import ANONYMOUS, SecurityProtocol, listeners_of
from kafkito.broker.security.acls import AclOperation, ResourceType

if TYPE_CHECKING:
    from kafkito.broker.context import RequestContext


def _protocol(ctx: RequestContext) -> SecurityProtocol:
    listeners = listeners_of(ctx.configs.config)
    for listener in listeners:
        if listener.name == ctx.listener:
            return listener.protocol
    return listeners[0].protocol  # ctx.listener None: the first listener's connection


def allow_token_requests(ctx: RequestContext) -> bool:
    """Kafka's allowTokenRequests."""
    if ctx.token_authenticated:
        return False
    protocol = _protocol(ctx)
    if protocol is SecurityProtocol.PLAINTEXT:
        return False
    return not (protocol is SecurityProtocol.SSL and ctx.principal == ANONYMOUS)


def authorized(ctx: RequestContext, op: AclOperation, resource_type: ResourceType, name: str) -> bool:
    """May the connection's principal do `op` on one USER or DELEGATION_TOKEN resource?"""
    authorizer = ctx.authorizer
    return authorizer is None or authorizer.authorize(ctx, op, resource_type, name)


def principal_of(kind: str | None, name: str) -> str:
    """A principal as Kafka's KafkaPrincipal.toString writes it (`User:alice`)."""
    return f"{kind}:{name}"
