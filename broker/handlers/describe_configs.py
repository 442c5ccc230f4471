"""DescribeConfigs (32): topic configs (effective value and source) and the broker's own properties.

v1 synonyms + config source; v2 no change; v3 config type + documentation; v4 flexible.
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.context import RequestContext
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

API_KEY = 32
VERSIONS = (1, 4)

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8

_STATIC_BROKER_CONFIG = 4
_DYNAMIC_BROKER_CONFIG = 2
_DEFAULT_CONFIG = 5
_STRING = 2


def _row(name: str, value: str | None, source: int, config_type: int) -> dict[str, Any]:
    return dict(
        name=name,
        value=value,
        read_only=False,
        config_source=source,
        is_default=source == _DEFAULT_CONFIG,
        is_sensitive=False,
        synonyms=[],
        config_type=config_type,
        documentation=None,
    )


def _topic_rows(ctx: RequestContext, name: str) -> list[dict[str, Any]]:
    return [
        _row(e.name, e.value, int(e.source), int(e.type)) for e in ctx.broker.logs.describe_topic_config(name)
    ]


def _broker_rows(ctx: RequestContext) -> list[dict[str, Any]]:
    dynamic = ctx.broker.dynamic_configs
    explicit = ctx.broker.config.explicit
    rows = []
    for name, value in sorted(ctx.broker.config.to_properties().items()):
        if value is None:
            continue
        if name in dynamic:
            source = _DYNAMIC_BROKER_CONFIG
        elif name in explicit:
            source = _STATIC_BROKER_CONFIG
        else:
            source = _DEFAULT_CONFIG
        text = str(value).lower() if isinstance(value, bool) else str(value)
        rows.append(_row(name, text, source, _STRING))
    return rows


def _describe(ctx: RequestContext, resource: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=[],
    )
    try:
        if resource.resource_type == TOPIC:
            rows = _topic_rows(ctx, resource.resource_name)
        elif resource.resource_type == BROKER:
            if resource.resource_name not in ("", str(ctx.broker.config.node_id)):
                raise _Invalid(f"unexpected broker id {resource.resource_name!r}")
            rows = _broker_rows(ctx)
        elif resource.resource_type == BROKER_LOGGER:
            rows = []
        else:
            raise _Invalid(f"unsupported resource type {resource.resource_type}")
    except LogError as exc:
        out.update(error_code=exc.code, error_message=exc.message or None)
        return out
    except _Invalid as exc:
        out.update(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc))
        return out
    keys = resource.configuration_keys
    if keys is not None:
        wanted = set(keys)
        rows = [r for r in rows if r["name"] in wanted]
    out["configs"] = rows
    return out


def handle(ctx: RequestContext, request: Any) -> Any:
    return ctx.response(throttle_time_ms=0, results=[_describe(ctx, r) for r in request.resources])


class _Invalid(Exception):
    pass
