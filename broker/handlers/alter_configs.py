"""AlterConfigs (33, legacy): the given topic configs replace all of the topic's overrides.

v1 no change; v2 flexible.
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.describe_configs import TOPIC
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 33
VERSIONS = (0, 2)


def _alter(ctx: RequestContext, resource: Any, validate_only: bool) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )
    if resource.resource_type != TOPIC:
        out.update(
            error_code=ErrorCode.INVALID_REQUEST, error_message="only topic configs can be altered here"
        )
        return out
    configs = {c.name: c.value or "" for c in resource.configs}
    try:
        ctx.broker.logs.replace_topic_config(resource.resource_name, configs, validate_only=validate_only)
    except LogError as exc:
        out.update(error_code=exc.code, error_message=exc.message or None)
    return out


def handle(ctx: RequestContext, request: Any) -> Any:
    validate_only = bool(request.validate_only)
    return ctx.response(
        throttle_time_ms=0, responses=[_alter(ctx, r, validate_only) for r in request.resources]
    )
