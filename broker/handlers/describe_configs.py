"""DescribeConfigs (32): topic configs (effective value and source), the broker's own properties and
a group's configs (GROUP resource: consumer.session.timeout.ms, consumer.heartbeat.interval.ms).

v0 is_default instead of the config source; v1 synonyms + config source; v2 no change; v3 config type
+ documentation; v4 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

from kafkito.broker.config import PROPERTIES
from kafkito.broker.context import RequestContext
from kafkito.broker.dynamic_configs import is_read_only
from kafkito.broker.handlers.config_resources import (
    BROKER,
    BROKER_LOGGER,
    GROUP,
    TOPIC,
    InvalidResource,
    check_broker_name,
    resource_result,
)
from kafkito.broker.listeners import is_sensitive
from kafkito.broker.logger_levels import LEVELS

API_KEY = 32
VERSIONS = (0, 4)

_STATIC_BROKER_CONFIG = 4
_DYNAMIC_BROKER_CONFIG = 2
_DYNAMIC_DEFAULT_BROKER_CONFIG = 3
_DYNAMIC_BROKER_LOGGER_CONFIG = 6
_DEFAULT_CONFIG = 5
_GROUP_CONFIG = 8
_STRING = 2
_INT = 3


class DescribeConfigsResource(Protocol):
    resource_type: int
    resource_name: str
    configuration_keys: Sequence[str] | None  # None: every config


class DescribeConfigsRequest(Protocol):
    """The fields of kafka-python's DescribeConfigsRequest this handler reads."""

    resources: Sequence[DescribeConfigsResource]
    include_synonyms: bool  # v1+


def _row(
    name: str, value: str | None, source: int, config_type: int, read_only: bool = False
) -> dict[str, Any]:
    return dict(
        name=name,
        value=value,
        read_only=read_only,
        config_source=source,
        is_default=source == _DEFAULT_CONFIG,
        is_sensitive=False,
        synonyms=[],
        config_type=config_type,
        documentation=None,
    )


def _topic_rows(ctx: RequestContext, name: str) -> list[dict[str, Any]]:
    return [_row(e.name, e.value, int(e.source), int(e.type)) for e in ctx.topics.describe_config(name)]


def _synonyms(
    ctx: RequestContext, key: str, dynamic: dict[str, str], default_dynamic: dict[str, str]
) -> list[dict[str, Any]]:
    """Every level that sets `key`, the one in force first (KIP-226's synonyms of a broker config)."""
    out = []
    if key in dynamic:
        out.append(dict(name=key, value=dynamic[key], source=_DYNAMIC_BROKER_CONFIG))
    if key in default_dynamic:
        out.append(dict(name=key, value=default_dynamic[key], source=_DYNAMIC_DEFAULT_BROKER_CONFIG))
    static = ctx.configs.static_value(key)
    if static is not None:
        out.append(dict(name=key, value=static, source=_STATIC_BROKER_CONFIG))
    prop = PROPERTIES.get(key)
    if prop is not None and prop.default is not None:
        text = str(prop.default).lower() if isinstance(prop.default, bool) else str(prop.default)
        out.append(dict(name=key, value=text, source=_DEFAULT_CONFIG))
    return out


def _broker_rows(ctx: RequestContext, name: str, synonyms: bool = False) -> list[dict[str, Any]]:
    """A broker's configs with their sources (its own dynamic value, the cluster default's, the static
    one, Kafka's default) and, asked for, the synonyms behind each; the cluster default resource ("")
    lists only its dynamic configs."""
    configs = ctx.configs
    default_dynamic = configs.dynamic_default
    if name == "":
        return [
            _row(k, v, _DYNAMIC_DEFAULT_BROKER_CONFIG, _STRING, is_read_only(k))
            for k, v in sorted(default_dynamic.items())
        ]
    dynamic = configs.dynamic_of(name)
    explicit = configs.config.explicit
    rows = []
    for key, value in sorted(configs.config.to_properties().items()):
        if value is None:
            continue
        if key in dynamic:
            source = _DYNAMIC_BROKER_CONFIG
        elif key in default_dynamic:
            source = _DYNAMIC_DEFAULT_BROKER_CONFIG
        elif key in explicit:
            source = _STATIC_BROKER_CONFIG
        else:
            source = _DEFAULT_CONFIG
        text = str(value).lower() if isinstance(value, bool) else str(value)
        row = _row(key, text, source, _STRING, is_read_only(key))
        if synonyms:
            row["synonyms"] = _synonyms(ctx, key, dynamic, default_dynamic)
        if is_sensitive(key):  # passwords, keys, JAAS configs: named, never shown (as Kafka)
            row.update(value=None, is_sensitive=True, synonyms=[dict(s, value=None) for s in row["synonyms"]])
        rows.append(row)
    return rows


def _rows(ctx: RequestContext, resource: DescribeConfigsResource, synonyms: bool) -> list[dict[str, Any]]:
    if resource.resource_type == TOPIC:
        return _topic_rows(ctx, resource.resource_name)
    if resource.resource_type == BROKER:
        check_broker_name(resource.resource_name, ctx.cluster.node_id)
        return _broker_rows(ctx, resource.resource_name, synonyms)
    if resource.resource_type == BROKER_LOGGER:
        check_broker_name(resource.resource_name, ctx.cluster.node_id)
        return [_row(n, level, _DYNAMIC_BROKER_LOGGER_CONFIG, _STRING) for n, level in LEVELS.describe()]
    if resource.resource_type == GROUP:
        return [
            _row(
                name,
                str(value),
                _GROUP_CONFIG if overridden else _DEFAULT_CONFIG,
                _INT if isinstance(value, int) else _STRING,
            )
            for name, value, overridden in ctx.groups.all_group_configs.describe(resource.resource_name)
        ]
    raise InvalidResource(f"unsupported resource type {resource.resource_type}")


def _describe(ctx: RequestContext, resource: DescribeConfigsResource, synonyms: bool) -> dict[str, Any]:
    out, rows = resource_result(resource, partial(_rows, ctx, resource, synonyms))
    keys = resource.configuration_keys
    if rows is not None and keys is not None:
        wanted = set(keys)
        rows = [r for r in rows if r["name"] in wanted]
    out["configs"] = rows or []
    return out


def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> Any:
    synonyms = ctx.version >= 1 and bool(request.include_synonyms)
    return ctx.response(throttle_time_ms=0, results=[_describe(ctx, r, synonyms) for r in request.resources])
