"""DeleteGroups (42): deletes Empty groups and their offsets; NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND otherwise.

v1 no change; v2 flexible; v3 a message per group (null, as Kafka's coordinator answers every outcome
here: its messages are for errors kafkito's one broker never has); the codec reads Kafka 4.4's schema
(`protocol/group_offsets.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 42
VERSIONS = (0, 3)


class DeleteGroupsRequestBody(Protocol):
    """The fields of kafka-python's DeleteGroupsRequest this handler reads."""

    groups_names: Sequence[str]


def handle(ctx: RequestContext, request: DeleteGroupsRequestBody) -> Any:
    errors = ctx.groups.delete_groups(request.groups_names)
    return ctx.response(
        throttle_time_ms=0,
        results=[
            dict(group_id=group_id, error_code=error, error_message=None)
            for group_id, error in errors.items()
        ],
    )
