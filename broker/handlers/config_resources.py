"""What the config APIs share (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, CreateTopics'
configs): resource types, the request fields of a resource, the broker-name check, the per-resource
result, and a topic's configs as Kafka describes them (the level each value comes from, with its
synonyms: the topic override, then the broker configs behind it, dynamic, cluster default, static,
default)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import structlog

from kafkito.broker.broker_configs import DEFAULT_CONFIG
from kafkito.broker.log.config import (
    ConfigEntry,
    ConfigSource,
    ConfigType,
    broker_defaults,
    broker_synonyms,
    deprecated_topic_configs,
    describe,
)
from kafkito.broker.log.errors import LogError
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.context import RequestContext

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
GROUP = 32

T = TypeVar("T")

log = structlog.get_logger("kafkito.config")


class ConfigResource(Protocol):
    resource_type: int
    resource_name: str


class InvalidResource(Exception):
    """The request names a resource or operation this broker does not serve: INVALID_REQUEST."""


def check_broker_name(name: str, node_id: int) -> None:
    """A broker resource names this broker by its id, or is empty (the broker answering)."""
    if name not in ("", str(node_id)):
        raise InvalidResource(f"unexpected broker id {name!r}")


def resource_result(resource: ConfigResource, apply: Callable[[], T]) -> tuple[dict[str, Any], T | None]:
    """Run `apply` for one resource: its response entry (error code and message) and what it returned.

    A LogError answers with its own code, an InvalidResource with INVALID_REQUEST; either gives None.
    """
    out: dict[str, Any] = dict(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )
    try:
        return out, apply()
    except LogError as exc:
        out.update(error_code=exc.code, error_message=exc.message or None)
    except InvalidResource as exc:
        out.update(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc))
    return out, None


def warn_deprecated(topic: str, names: Iterable[str]) -> None:
    """Log a warning for each deprecated topic config set (accepted, as Kafka 3.9 accepts them)."""
    for name, replacement in deprecated_topic_configs(names).items():
        log.warning("topic.config_deprecated", topic=topic, config=name, replaced_by=replacement)


def topic_rows(
    ctx: RequestContext, entries: Sequence[ConfigEntry], synonyms: bool, documentation: bool
) -> list[dict[str, Any]]:
    """DescribeConfigs rows of a topic's configs: each value's source is the first level that sets it
    (the topic, this broker, the cluster default, the static config, the default), as Kafka's."""
    configs, broker = ctx.configs, str(ctx.cluster.node_id)
    rows = []
    for e in entries:
        found: list[tuple[str, str | None, int]] = []
        if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG:
            found.append((e.name, e.value, int(e.source)))
        names = broker_synonyms(e.name)
        if names:
            found += configs.synonyms(names, names[0], broker)
        source = found[0][2] if found else DEFAULT_CONFIG
        rows.append(
            dict(
                name=e.name,
                value=e.value,
                read_only=False,
                config_source=source,
                is_default=source == DEFAULT_CONFIG,
                is_sensitive=False,
                synonyms=[dict(name=n, value=v, source=src) for n, v, src in found] if synonyms else [],
                config_type=int(e.type),
                documentation=f"Kafka's topic config {e.name}." if documentation else None,
            )
        )
    return rows


def created_topic_configs(
    ctx: RequestContext, name: str, overrides: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """CreateTopics' configs of a topic: the created one's, or, given `overrides`, those the topic would
    have (validate-only)."""
    if overrides is None:
        entries = ctx.topics.describe_config(name)
    else:
        defaults = broker_defaults(ctx.configs.config.explicit_properties())
        entries = describe(overrides, defaults)
    return [
        dict(
            name=r["name"],
            value=r["value"],
            read_only=False,
            config_source=r["config_source"],
            is_sensitive=False,
        )
        for r in topic_rows(ctx, entries, synonyms=False, documentation=False)
    ]


_TYPE_IDS = {t.name: int(t) for t in ConfigType}


def type_id(kafka_type: str | None) -> int:
    """DescribeConfigs' config_type of a ConfigDef.Type name (0, UNKNOWN, for none)."""
    return _TYPE_IDS.get(kafka_type or "", 0)


def kafka_text(kafka_type: str | None, value: Any) -> str | None:
    """A config value as Kafka renders one of its type (lists joined with commas, booleans and doubles
    as Java prints them)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    try:
        if kafka_type == "LIST":
            return ",".join(p.strip() for p in text.split(",") if p.strip())
        if kafka_type in ("INT", "LONG", "SHORT"):
            return str(int(text.strip()))
        if kafka_type == "BOOLEAN":
            return text.strip().lower()
        if kafka_type == "DOUBLE":
            return java_double(float(text))
    except ValueError:
        pass
    return text


def java_double(x: float) -> str:
    """Java's Double.toString: plain from 10^-3 to 10^7, else d.dddE<n>."""
    if x != x or x in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[repr(x)]
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) - 1 + int(exponent)
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"
