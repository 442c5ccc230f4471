"""DescribeClientQuotas (48): the stored quotas of the entities a filter matches.

Each filter component names an entity type and matches its name exactly, its default entity, or any
name; `strict` keeps only entities of exactly the filter's types. v1 is flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.quotas import FilterComponent

API_KEY = 48
VERSIONS = (0, 1)


class ComponentData(Protocol):
    entity_type: str
    match_type: int
    match: str | None


class DescribeClientQuotasRequest(Protocol):
    components: Sequence[ComponentData]
    strict: bool


def handle(ctx: RequestContext, request: DescribeClientQuotasRequest) -> Any:
    components = [FilterComponent(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        found = ctx.security.describe_quotas(components, bool(request.strict))
    except SecurityError as e:
        return ctx.response(throttle_time_ms=0, error_code=e.code, error_message=e.message, entries=None)
    entries = [
        dict(
            entity=[dict(entity_type=t, entity_name=n) for t, n in entity],
            values=[dict(key=k, value=v) for k, v in sorted(values.items())],
        )
        for entity, values in found
    ]
    return ctx.response(throttle_time_ms=0, error_code=0, error_message=None, entries=entries)
