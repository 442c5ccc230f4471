"""CreateAcls (30): store ACLs (validated as Kafka does), answered once they are durable.

v0 carries no pattern type (LITERAL); v1 pattern types (PREFIXED); v2 flexible. Kafka answers
SECURITY_DISABLED when no authorizer is configured; kafkito always stores ACLs (enforcing them is the
authorizer's, off by default), so that admin clients and tools can manage them. A creation with an
UNKNOWN (0) resource type, pattern type, operation or permission closes the connection, as Kafka's
request parser refuses it; another value no enum knows is INVALID_REQUEST.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.describe_acls import refuse_unknown_codes
from kafkito.broker.security.acls import (
    AclBinding,
    operation,
    pattern_type,
    permission_type,
    resource_type,
)
from kafkito.broker.security.errors import SecurityError

API_KEY = 30
VERSIONS = (0, 3)


class AclCreation(Protocol):
    resource_type: int
    resource_name: str
    resource_pattern_type: int  # v1+ (v0 decodes as LITERAL, 3)
    principal: str
    host: str
    operation: int
    permission_type: int


class CreateAclsRequest(Protocol):
    creations: Sequence[AclCreation]


def binding(c: AclCreation) -> AclBinding:
    return AclBinding(
        resource_type(c.resource_type),
        c.resource_name,
        pattern_type(c.resource_pattern_type),
        c.principal,
        c.host,
        operation(c.operation),
        permission_type(c.permission_type),
    )


def handle(ctx: RequestContext, request: CreateAclsRequest) -> Any:
    for c in request.creations:
        codes = (c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
        refuse_unknown_codes("CreateAcls creation", codes)
    results = ctx.security.create_acls([binding(c) for c in request.creations])
    return _answer(ctx, results)


async def _answer(ctx: RequestContext, results: list[SecurityError | None]) -> Any:
    await ctx.security.synced()
    return ctx.response(
        throttle_time_ms=0,
        results=[
            dict(error_code=0, error_message=None)
            if e is None
            else dict(error_code=e.code, error_message=e.message)
            for e in results
        ],
    )
