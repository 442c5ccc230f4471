"""IncrementalAlterConfigs (44): SET/DELETE/APPEND/SUBTRACT topic configs; broker properties set in memory.

v1 flexible.
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.config import ConfigError
from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.describe_configs import BROKER, TOPIC
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 44
VERSIONS = (0, 1)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _alter_topic(ctx: RequestContext, name: str, configs: Any, validate_only: bool) -> None:
    logs = ctx.broker.logs
    current = {e.name: e.value for e in logs.describe_topic_config(name)}
    to_set: dict[str, str] = {}
    to_delete: list[str] = []
    for c in configs:
        op = c.config_operation
        if op == SET:
            to_set[c.name] = c.value or ""
        elif op == DELETE:
            to_delete.append(c.name)
        elif op in (APPEND, SUBTRACT):
            items = [v for v in (current.get(c.name) or "").split(",") if v]
            given = [v for v in (c.value or "").split(",") if v]
            if op == APPEND:
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            to_set[c.name] = ",".join(items)
        else:
            raise _Invalid(f"unknown config operation {op}")
    logs.alter_topic_config(name, to_set, to_delete, validate_only=validate_only)


def _alter_broker(ctx: RequestContext, name: str, configs: Any, validate_only: bool) -> None:
    if name not in ("", str(ctx.broker.config.node_id)):
        raise _Invalid(f"unexpected broker id {name!r}")
    for c in configs:
        if c.config_operation != SET:
            raise _Invalid("only SET is supported for broker configs")
    if validate_only:
        return
    for c in configs:
        try:
            ctx.broker.config.set(c.name, c.value or "")
        except ConfigError as exc:
            raise _Invalid(str(exc)) from exc
        ctx.broker.dynamic_configs[c.name] = c.value or ""
    ctx.broker.logs.update_broker_config(ctx.broker.config.explicit_properties())


def _alter(ctx: RequestContext, resource: Any, validate_only: bool) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )
    try:
        if resource.resource_type == TOPIC:
            _alter_topic(ctx, resource.resource_name, resource.configs, validate_only)
        elif resource.resource_type == BROKER:
            _alter_broker(ctx, resource.resource_name, resource.configs, validate_only)
        else:
            raise _Invalid(f"unsupported resource type {resource.resource_type}")
    except LogError as exc:
        out.update(error_code=exc.code, error_message=exc.message or None)
    except _Invalid as exc:
        out.update(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc))
    return out


def handle(ctx: RequestContext, request: Any) -> Any:
    validate_only = bool(request.validate_only)
    return ctx.response(
        throttle_time_ms=0, responses=[_alter(ctx, r, validate_only) for r in request.resources]
    )


class _Invalid(Exception):
    pass
