"""DescribeConfigs (32): topic configs, a broker's configs, log levels (BROKER_LOGGER) and a group's
configs (GROUP resource: consumer.session.timeout.ms, consumer.heartbeat.interval.ms...).

A broker is described as Kafka 4.4 describes one: every config of Kafka's broker ConfigDef (the
generated `broker/kafka_config_defs.py`) with Kafka's type, update mode (read-only unless Kafka changes
it at run time) and sensitivity, plus the Kafka-named ones given explicitly; kafkito's own settings
(`host`, `port`, `group.timeline.max.events`, `kafkito.*`...) are not listed, as Kafka lists only its
own. A value is kafkito's where kafkito has the property, else what was given, else Kafka's default;
its source and synonyms are the levels that set it (`BrokerConfigs.synonyms`). What depends only on
the name is worked out once (`_broker_statics`).

v0 is_default instead of the config source; v1 synonyms + config source; v2 no change; v3 config type
+ documentation; v4 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import Any, NamedTuple, Protocol

from kafkito.broker.broker_configs import (
    DEFAULT_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    BrokerConfigs,
    kafka_default,
)
from kafkito.broker.config import PROPERTIES
from kafkito.broker.context import RequestContext
from kafkito.broker.dynamic_configs import is_read_only, kafka_type
from kafkito.broker.handlers.config_resources import (
    BROKER,
    BROKER_LOGGER,
    GROUP,
    TOPIC,
    InvalidResource,
    check_broker_name,
    kafka_text,
    resource_result,
    topic_rows,
    type_id,
)
from kafkito.broker.listeners import is_sensitive
from kafkito.broker.logger_levels import LEVELS
from kafkito.protocol.errors import ErrorCode

API_KEY = 32
VERSIONS = (0, 4)

_DYNAMIC_BROKER_LOGGER_CONFIG = 6
_GROUP_CONFIG = 8
_BOOLEAN = 1
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
    include_documentation: bool  # v3+


def _row(name: str, value: str | None, source: int, config_type: int) -> dict[str, Any]:
    """A row of a log level or a group config (no synonyms, not read-only)."""
    return dict(
        name=name,
        value=value,
        read_only=False,
        config_source=source,
        is_default=source == DEFAULT_CONFIG,
        is_sensitive=False,
        synonyms=[],
        config_type=config_type,
        documentation=None,
    )


class _Static(NamedTuple):
    """What DescribeConfigs says of a broker config whatever its value."""

    name: str
    type: str | None  # ConfigDef.Type name; None: Kafka does not define it
    read_only: bool
    sensitive: bool
    documentation: str | None
    synonyms: tuple[str, ...]  # the names that stand in for it, in Kafka's order
    defaults: tuple[tuple[str, str | None, int], ...]  # its synonyms when no level sets any of them


def _static_of(name: str) -> _Static:
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS

    kind = kafka_type(name)
    d = BROKER_CONFIG_DEFS.get(name)
    synonyms: tuple[str, ...] = (name,)
    if d is not None and d.synonyms:
        synonyms = d.synonyms
    elif d is None and name.startswith("listener.name."):
        base = name.split(".", 3)[3]
        synonyms = (name, base.split(".", 1)[1]) if base not in BROKER_CONFIG_DEFS else (name, base)
    prop = PROPERTIES.get(name)
    doc = prop.doc if prop is not None else f"Kafka's broker config {name} (kafkito reports Kafka's value)."
    defaults = [(n, kafka_default(n), DEFAULT_CONFIG) for n in synonyms if kafka_default(n) is not None]
    while defaults and defaults[0][0] != name:  # as Kafka: those before the config itself are dropped
        defaults.pop(0)
    return _Static(
        name,
        kind,
        is_read_only(name),
        kind is None or kind == "PASSWORD" or is_sensitive(name),  # Kafka hides what it cannot type
        doc if d is None or d.documented else None,
        synonyms,
        tuple(defaults),
    )


@cache
def _broker_statics() -> tuple[_Static, ...]:
    """Every broker config Kafka describes by default (its ConfigDef's non-internal ones), in order."""
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS

    return tuple(_static_of(name) for name, d in BROKER_CONFIG_DEFS.items() if not d.internal)


@cache
def _kafkito_only() -> frozenset[str]:
    """kafkito's own properties, which Kafka has no config of (not described)."""
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS

    return frozenset(name for name in PROPERTIES if name not in BROKER_CONFIG_DEFS)


def _current_values(configs: BrokerConfigs) -> dict[str, Any]:
    """The broker's value of each config it has one of (kafkito's properties, then what was given)."""
    config = configs.config
    values = config.to_properties()
    values.setdefault("broker.id", config.node_id)
    if values.get("listeners") is None:  # the one listener --host/--port make
        values["listeners"] = f"PLAINTEXT://{config.host}:{config.port}"
    return values


def _broker_row(
    configs: BrokerConfigs,
    static: _Static,
    values: dict[str, Any],
    broker: str | None,
    docs: bool,
    set_names: set[str],
) -> dict[str, Any]:
    if set_names.isdisjoint(static.synonyms):
        found = list(static.defaults)
    else:
        found = configs.synonyms(static.synonyms, static.name, broker)
    if broker is None:  # the cluster default resource: its own level only, as Kafka lists it
        found = [s for s in found if s[2] == DYNAMIC_DEFAULT_BROKER_CONFIG]
    source = found[0][2] if found else DEFAULT_CONFIG
    if static.name in values:
        value = kafka_text(static.type, values[static.name])
    elif found:
        value = kafka_text(static.type, found[0][1])
    else:
        value = None
    hide = static.sensitive
    return dict(
        name=static.name,
        value=None if hide else value,
        read_only=static.read_only,
        config_source=source,
        is_default=source == DEFAULT_CONFIG,
        is_sensitive=hide,
        synonyms=[dict(name=n, value=None if hide else v, source=src) for n, v, src in found],
        config_type=type_id(static.type),
        documentation=static.documentation if docs else None,
    )


def _broker_rows(ctx: RequestContext, name: str, synonyms: bool, docs: bool) -> list[dict[str, Any]]:
    """A broker's configs (its id), or the cluster default's dynamic ones (""), as Kafka lists them."""
    configs = ctx.configs
    if name == "":
        names, broker, values = sorted(configs.dynamic_default), None, dict(configs.dynamic_default)
        statics = [_static_of(n) for n in names]
    else:
        broker, values = name, _current_values(configs)
        statics = list(_broker_statics())
        listed = {s.name for s in statics}
        given = (configs.config.explicit | set(configs.dynamic_of(name))) - listed - _kafkito_only()
        statics += [_static_of(n) for n in sorted(given) if not n.startswith("kafkito.")]
    set_names = configs.names_set(broker)
    rows = [_broker_row(configs, s, values, broker, docs, set_names) for s in statics]
    if not synonyms:
        for row in rows:
            row["synonyms"] = []
    return rows


def _rows(
    ctx: RequestContext, resource: DescribeConfigsResource, synonyms: bool, docs: bool
) -> list[dict[str, Any]]:
    if resource.resource_type == TOPIC:
        entries = ctx.topics.describe_config(resource.resource_name)
        return topic_rows(ctx, entries, synonyms, docs)
    if resource.resource_type == BROKER:
        check_broker_name(resource.resource_name, ctx.cluster.node_id)
        return _broker_rows(ctx, resource.resource_name, synonyms, docs)
    if resource.resource_type == BROKER_LOGGER:
        check_broker_name(resource.resource_name, ctx.cluster.node_id)
        return [_row(n, level, _DYNAMIC_BROKER_LOGGER_CONFIG, _STRING) for n, level in LEVELS.describe()]
    if resource.resource_type == GROUP:
        return [
            _row(
                name,
                str(value).lower() if isinstance(value, bool) else str(value),
                _GROUP_CONFIG if overridden else DEFAULT_CONFIG,
                _BOOLEAN if isinstance(value, bool) else _INT if isinstance(value, int) else _STRING,
            )
            for name, value, overridden in ctx.groups.all_group_configs.describe(resource.resource_name)
        ]
    raise InvalidResource(f"unsupported resource type {resource.resource_type}")


def _describe(
    ctx: RequestContext, resource: DescribeConfigsResource, synonyms: bool, docs: bool
) -> dict[str, Any]:
    out, rows = resource_result(resource, partial(_rows, ctx, resource, synonyms, docs))
    if out["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        out["error_message"] = None  # Kafka answers an unknown topic with the code alone
    keys = resource.configuration_keys
    if rows is not None and keys is not None:
        wanted = set(keys)
        rows = [r for r in rows if r["name"] in wanted]
    out["configs"] = rows or []
    return out


def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> Any:
    synonyms = ctx.version >= 1 and bool(request.include_synonyms)
    docs = ctx.version >= 3 and bool(request.include_documentation)
    results = [_describe(ctx, r, synonyms, docs) for r in request.resources]
    return ctx.response(throttle_time_ms=0, results=results)
