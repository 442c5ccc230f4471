"""DeleteGroups (42): deletes Empty groups and their offsets; NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND otherwise.

v1 no change; v2 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 42
VERSIONS = (0, 2)


class DeleteGroupsRequestBody(Protocol):
    """The fields of kafka-python's DeleteGroupsRequest this handler reads."""

    groups_names: Sequence[str]


def handle(ctx: RequestContext, request: DeleteGroupsRequestBody) -> Any:
    errors = ctx.groups.delete_groups(request.groups_names)
    return ctx.response(
        throttle_time_ms=0,
        results=[dict(group_id=group_id, error_code=error) for group_id, error in errors.items()],
    )
