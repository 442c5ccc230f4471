"""DescribeAcls (29): the stored ACLs a filter matches, grouped by resource pattern.

v0 carries no pattern type (its filter reads LITERAL); v1 pattern types, ANY and MATCH; v2 flexible.
A filter with an UNKNOWN (0) resource type, pattern type, operation or permission closes the
connection, as Kafka's request parser refuses it (DescribeAclsRequest's validation); another value
no enum knows is answered INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import (
    AclBinding,
    AclFilter,
    operation,
    pattern_type,
    permission_type,
    resource_type,
)
from kafkito.broker.security.errors import SecurityError
from kafkito.protocol.codec import MalformedRequest

API_KEY = 29
VERSIONS = (0, 3)


class AclFilterFields(Protocol):
    """The filter's fields, as DescribeAcls and each DeleteAcls filter carry them."""

    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: int  # v1+ (v0 decodes as LITERAL, 3)
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int


def acl_filter(f: AclFilterFields) -> AclFilter:
    return AclFilter(
        resource_type(f.resource_type_filter),
        f.resource_name_filter,
        pattern_type(f.pattern_type_filter),
        f.principal_filter,
        f.host_filter,
        operation(f.operation),
        permission_type(f.permission_type),
    )


def grouped(acls: list[AclBinding]) -> list[dict[str, Any]]:
    """The response's resources: one per resource pattern, each with its ACLs."""
    by_pattern: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for acl in acls:
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        by_pattern.setdefault(key, []).append(
            dict(
                principal=acl.principal,
                host=acl.host,
                operation=int(acl.operation),
                permission_type=int(acl.permission),
            )
        )
    return [
        dict(resource_type=t, resource_name=name, pattern_type=p, acls=entries)
        for (t, name, p), entries in sorted(by_pattern.items())
    ]


_UNKNOWN = 0


def _refuse_unknown_elements(f: AclFilterFields) -> None:
    """Kafka's DescribeAclsRequest does not parse with an UNKNOWN element: the broker closes."""
    refuse_unknown_codes(
        "DescribeAcls filter", (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
    )


def refuse_unknown_codes(what: str, codes: tuple[int, ...]) -> None:
    """An UNKNOWN (0) resource type, pattern type, operation or permission: Kafka's ACL requests do not
    parse with one, and the broker closes the connection (a value no enum knows is parsed, and refused
    by the validation with INVALID_REQUEST)."""
    if _UNKNOWN in codes:
        raise MalformedRequest(f"{what} with an UNKNOWN element")


def handle(ctx: RequestContext, request: AclFilterFields) -> Any:
    _refuse_unknown_elements(request)
    try:
        acls = ctx.security.describe_acls(acl_filter(request))
    except SecurityError as e:
        return ctx.response(throttle_time_ms=0, error_code=e.code, error_message=e.message, resources=[])
    return ctx.response(throttle_time_ms=0, error_code=0, error_message=None, resources=grouped(acls))
