"""DeleteAcls (31): delete the stored ACLs each filter matches, answered once that is durable.

v0 carries no pattern type (its filters read LITERAL); v1 pattern types, ANY and MATCH; v2 flexible.
Each filter's result lists the ACLs it deleted. A filter with an UNKNOWN (0) resource type, pattern
type, operation or permission closes the connection, as Kafka's request parser refuses it; another
value no enum knows is INVALID_REQUEST.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.describe_acls import AclFilterFields, acl_filter, refuse_unknown_codes
from kafkito.broker.security.acls import AclBinding
from kafkito.broker.security.errors import SecurityError

API_KEY = 31
VERSIONS = (0, 3)


class DeleteAclsRequest(Protocol):
    filters: Sequence[AclFilterFields]


def handle(ctx: RequestContext, request: DeleteAclsRequest) -> Any:
    for f in request.filters:
        codes = (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
        refuse_unknown_codes("DeleteAcls filter", codes)
    results = ctx.security.delete_acls([acl_filter(f) for f in request.filters])
    return _answer(ctx, results)


def _deleted(acl: AclBinding) -> dict[str, Any]:
    return dict(
        error_code=0,
        error_message=None,
        resource_type=int(acl.resource_type),
        resource_name=acl.resource_name,
        pattern_type=int(acl.pattern_type),
        principal=acl.principal,
        host=acl.host,
        operation=int(acl.operation),
        permission_type=int(acl.permission),
    )


async def _answer(ctx: RequestContext, results: list[list[AclBinding] | SecurityError]) -> Any:
    await ctx.security.synced()
    filter_results = [
        dict(error_code=r.code, error_message=r.message, matching_acls=[])
        if isinstance(r, SecurityError)
        else dict(error_code=0, error_message=None, matching_acls=[_deleted(acl) for acl in r])
        for r in results
    ]
    return ctx.response(throttle_time_ms=0, filter_results=filter_results)
