"""Topic-level log configs: Kafka's names, types, checks, broker fallbacks, typed view.

The table is Kafka 4.4's LogConfig (tests/broker/test_config_defs.py checks it against the generated
`broker/kafka_config_defs.py`: names, types, defaults, broker synonyms), with kafkito's checks of each
value. A topic config's default is the broker property it follows (`broker.config`'s table), or its own
default here when no broker property kafkito knows gives it.

Three configs Kafka 4.0 removed (message.format.version, message.downconversion.enable,
message.timestamp.difference.max.ms) are still accepted, as Kafka 3.9 accepts them, because kafkito
serves Kafka 3.9's old protocol versions (message.downconversion.enable=false still refuses Fetch
v0-v3). They are `removed`: described only for a topic that sets one, never as defaults, so a
description lists what Kafka 4.4 lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from kafkito.broker.config import PROPERTIES, default
from kafkito.broker.log.errors import InvalidConfig

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigType(IntEnum):
    """DescribeConfigs' config_type values."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """DescribeConfigs' config_source values that a topic config can have here."""

    DYNAMIC_TOPIC_CONFIG = 1
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class TopicConfigDef(NamedTuple):
    """One topic config: its Kafka name, the broker property it defaults from, type, check, default.

    `default` is None when the broker property (in `broker.config`'s table) gives Kafka's default;
    `removed`: a config Kafka 4.0 removed, accepted and described only when a topic sets it.
    """

    name: str
    broker_name: str | None
    type: ConfigType
    check: Callable[[str], None] | None = None
    default: str | None = None
    removed: bool = False


class ConfigEntry(NamedTuple):
    """One row of a DescribeConfigs answer for a topic (the source says whether a topic override, some
    broker property or Kafka's default gives the value; the handlers refine the broker level)."""

    name: str
    value: str
    source: ConfigSource
    type: ConfigType

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


def _int_range(lo: int, hi: int) -> Callable[[str], None]:
    def check(value: str) -> None:
        try:
            n = int(value.strip())
        except ValueError:
            raise InvalidConfig(f"value {value!r} is not an integer") from None
        if not lo <= n <= hi:
            raise InvalidConfig(f"value {n} is outside [{lo}, {hi}]")

    return check


def _ratio(value: str) -> None:
    try:
        x = float(value.strip())
    except ValueError:
        raise InvalidConfig(f"value {value!r} is not a number") from None
    if not 0.0 <= x <= 1.0:
        raise InvalidConfig(f"value {x} is outside [0, 1]")


def _one_of(*allowed: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value.strip() not in allowed:
            raise InvalidConfig(f"value {value!r} is not one of {', '.join(allowed)}")

    return check


def _bool(value: str) -> None:
    if value.strip().lower() not in ("true", "false"):
        raise InvalidConfig(f"value {value!r} is not a boolean")


def _cleanup_policy(value: str) -> None:
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts or any(p not in ("compact", "delete") for p in parts):
        raise InvalidConfig(f"cleanup.policy {value!r} must be a list of compact, delete")


def _gzip_level(value: str) -> None:
    if value.strip() != "-1":
        _int_range(1, 9)(value)


def _long(lo: int) -> Callable[[str], None]:
    return _int_range(lo, LONG_MAX)


def _int(lo: int) -> Callable[[str], None]:
    return _int_range(lo, INT_MAX)


_L, _I, _S, _B = ConfigType.LONG, ConfigType.INT, ConfigType.STRING, ConfigType.BOOLEAN
_D, _LIST = ConfigType.DOUBLE, ConfigType.LIST
_NEVER = str(LONG_MAX)

# Kafka's topic configs. Those without a default here take the broker property's default.
TOPIC_CONFIGS: dict[str, TopicConfigDef] = {
    d.name: d
    for d in (
        TopicConfigDef("cleanup.policy", "log.cleanup.policy", _LIST, _cleanup_policy),
        TopicConfigDef("compression.gzip.level", "compression.gzip.level", _I, _gzip_level, "-1"),
        TopicConfigDef("compression.lz4.level", "compression.lz4.level", _I, _int_range(1, 17), "9"),
        TopicConfigDef(
            "compression.type",
            "compression.type",
            _S,
            _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
            "producer",
        ),
        TopicConfigDef("compression.zstd.level", "compression.zstd.level", _I, _int_range(-131072, 22), "3"),
        TopicConfigDef("delete.retention.ms", "log.cleaner.delete.retention.ms", _L, _long(0)),
        TopicConfigDef("errors.deadletterqueue.group.enable", None, _B, _bool, "false"),
        TopicConfigDef("file.delete.delay.ms", "log.segment.delete.delay.ms", _L, _long(0), "60000"),
        TopicConfigDef("flush.messages", "log.flush.interval.messages", _L, _long(1)),
        TopicConfigDef("flush.ms", "log.flush.interval.ms", _L, _long(0), _NEVER),
        TopicConfigDef("follower.replication.throttled.replicas", None, _LIST, None, ""),
        TopicConfigDef("index.interval.bytes", "log.index.interval.bytes", _I, _int(0), "4096"),
        TopicConfigDef("leader.replication.throttled.replicas", None, _LIST, None, ""),
        TopicConfigDef("local.retention.bytes", "log.local.retention.bytes", _L, _long(-2), "-2"),
        TopicConfigDef("local.retention.ms", "log.local.retention.ms", _L, _long(-2), "-2"),
        TopicConfigDef("max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", _L, _long(1), _NEVER),
        TopicConfigDef(
            "max.decompressed.message.bytes",
            "max.decompressed.message.bytes",
            _I,
            _int_range(1, INT_MAX - 8),
            str(INT_MAX - 8),
        ),
        TopicConfigDef("max.message.bytes", "message.max.bytes", _I, _int(0)),
        TopicConfigDef(
            "message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms", _L, _long(0), "3600000"
        ),
        TopicConfigDef(
            "message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms", _L, _long(0), _NEVER
        ),
        TopicConfigDef(
            "message.timestamp.type",
            "log.message.timestamp.type",
            _S,
            _one_of("CreateTime", "LogAppendTime"),
        ),
        TopicConfigDef("min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", _D, _ratio, "0.5"),
        TopicConfigDef("min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", _L, _long(0), "0"),
        TopicConfigDef("min.insync.replicas", "min.insync.replicas", _I, _int(1), "1"),
        TopicConfigDef("preallocate", "log.preallocate", _B, _bool, "false"),
        TopicConfigDef("remote.copy.lag.bytes", "log.remote.copy.lag.bytes", _L, _long(-1), "-1"),
        TopicConfigDef("remote.copy.lag.ms", "log.remote.copy.lag.ms", _L, _long(-1), "0"),
        TopicConfigDef("remote.log.copy.disable", None, _B, _bool, "false"),
        TopicConfigDef("remote.log.delete.on.disable", None, _B, _bool, "false"),
        TopicConfigDef("remote.storage.enable", None, _B, _bool, "false"),
        TopicConfigDef("retention.bytes", "log.retention.bytes", _L, _long(-(2**63))),
        TopicConfigDef("retention.ms", "log.retention.ms", _L, _long(-1)),
        TopicConfigDef("segment.bytes", "log.segment.bytes", _I, _int(14)),
        TopicConfigDef("segment.index.bytes", "log.index.size.max.bytes", _I, _int(4), str(10 * 1024 * 1024)),
        TopicConfigDef("segment.jitter.ms", "log.roll.jitter.ms", _L, _long(0), "0"),
        TopicConfigDef("segment.ms", "log.roll.ms", _L, _long(1), "604800000"),
        TopicConfigDef(
            "unclean.leader.election.enable", "unclean.leader.election.enable", _B, _bool, "false"
        ),
        # Removed in Kafka 4.0, accepted as Kafka 3.9 does (see the module's docstring).
        TopicConfigDef(
            "message.downconversion.enable",
            "log.message.downconversion.enable",
            _B,
            _bool,
            "true",
            removed=True,
        ),
        TopicConfigDef(
            "message.format.version", "log.message.format.version", _S, None, "3.0-IV1", removed=True
        ),
        TopicConfigDef(
            "message.timestamp.difference.max.ms",
            "log.message.timestamp.difference.max.ms",
            _L,
            _long(0),
            _NEVER,
            removed=True,
        ),
    )
}

# The removed topic configs (Kafka 3.9 still accepts them): kept and described when a topic sets one;
# setting one logs a warning naming what replaces it.
DEPRECATED_TOPIC_CONFIGS: dict[str, str] = {
    "message.downconversion.enable": (
        "nothing: Kafka 4 no longer down-converts for old fetchers (false still refuses Fetch v0-v3 here, "
        "as Kafka 3.9 does)"
    ),
    "message.format.version": "nothing: the message format follows the protocol (magic v2)",
    "message.timestamp.difference.max.ms": (
        "message.timestamp.before.max.ms and message.timestamp.after.max.ms"
    ),
}


def deprecated_topic_configs(names: Iterable[str]) -> dict[str, str]:
    """The deprecated configs among `names`, each with what replaces it."""
    return {n: DEPRECATED_TOPIC_CONFIGS[n] for n in names if n in DEPRECATED_TOPIC_CONFIGS}


# Broker properties that stand in for a missing one, with the factor that converts them to ms.
_BROKER_FALLBACKS: dict[str, tuple[tuple[str, int], ...]] = {
    "log.retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "log.roll.ms": (("log.roll.hours", 3_600_000),),
    "log.roll.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
    "log.flush.interval.ms": (("log.flush.scheduler.interval.ms", 1),),
}


def broker_synonyms(name: str) -> tuple[str, ...]:
    """The broker properties that give topic config `name` its default, the first one in force first
    (Kafka's ServerTopicConfigSynonyms: `retention.ms` -> log.retention.ms, .minutes, .hours)."""
    d = TOPIC_CONFIGS.get(name)
    if d is None or d.broker_name is None:
        return ()
    return (d.broker_name, *(alt for alt, _ in _BROKER_FALLBACKS.get(d.broker_name, ())))


def _lookup(source: Mapping[str, Any] | Any, dotted: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(dotted)
    return getattr(source, dotted.replace(".", "_"), None)


def _to_config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(str(v) for v in value)
    return str(value)


def broker_defaults(source: Mapping[str, Any] | Any | None) -> dict[str, str]:
    """Topic-config values that the broker's own properties set, keyed by topic config name.

    `source` is a mapping of Kafka's dotted broker property names, or an object whose attributes are
    those names with dots replaced by underscores (the broker's `Config`).
    """
    if source is None:
        return {}
    out: dict[str, str] = {}
    for d in TOPIC_CONFIGS.values():
        if d.broker_name is None:
            continue
        value = _lookup(source, d.broker_name)
        if value is None:
            for alt, factor in _BROKER_FALLBACKS.get(d.broker_name, ()):
                alt_value = _lookup(source, alt)
                if alt_value is not None:
                    value = int(alt_value) * factor
                    break
        if value is not None:
            out[d.name] = _to_config_string(value)
    return out


def _kafka_defaults() -> dict[str, str]:
    from_broker = broker_defaults({name: p.default for name, p in PROPERTIES.items()})
    return {
        name: d.default if d.default is not None else from_broker[name] for name, d in TOPIC_CONFIGS.items()
    }


# Every topic config's Kafka default (what DescribeConfigs reports as DEFAULT_CONFIG).
TOPIC_DEFAULTS: dict[str, str] = _kafka_defaults()


def validate_overrides(overrides: Mapping[str, str | None]) -> dict[str, str]:
    """Check names and values of topic config overrides; None values are dropped (= use default)."""
    out: dict[str, str] = {}
    for name, value in overrides.items():
        d = TOPIC_CONFIGS.get(name)
        if d is None:
            raise InvalidConfig(f"unknown topic config name: {name}")
        if value is None:
            continue
        if d.check is not None:
            try:
                d.check(value)
            except InvalidConfig as e:
                raise InvalidConfig(f"invalid value for {name}: {e.message}") from None
        out[name] = value.strip()
    return out


def describe(overrides: Mapping[str, str], defaults: Mapping[str, str]) -> list[ConfigEntry]:
    """Every topic config with its effective value and where that value comes from (a removed config
    only when the topic sets it)."""
    entries = []
    for name, d in sorted(TOPIC_CONFIGS.items()):
        if d.removed and name not in overrides:
            continue
        if name in overrides:
            entries.append(ConfigEntry(name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG, d.type))
        elif name in defaults:
            entries.append(ConfigEntry(name, defaults[name], ConfigSource.STATIC_BROKER_CONFIG, d.type))
        else:
            entries.append(ConfigEntry(name, TOPIC_DEFAULTS[name], ConfigSource.DEFAULT_CONFIG, d.type))
    return entries


_DEFAULT = TOPIC_DEFAULTS


def _policy(value: str) -> frozenset[str]:
    return frozenset(p.strip() for p in value.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The configs a partition log acts on, typed."""

    segment_bytes: int = int(_DEFAULT["segment.bytes"])
    segment_ms: int = int(_DEFAULT["segment.ms"])
    retention_ms: int = int(_DEFAULT["retention.ms"])
    retention_bytes: int = int(_DEFAULT["retention.bytes"])
    max_message_bytes: int = int(_DEFAULT["max.message.bytes"])
    message_timestamp_type: str = _DEFAULT["message.timestamp.type"]
    cleanup_policy: frozenset[str] = _policy(_DEFAULT["cleanup.policy"])
    flush_messages: int = int(_DEFAULT["flush.messages"])
    flush_ms: int = int(_DEFAULT["flush.ms"])
    index_interval_bytes: int = int(_DEFAULT["index.interval.bytes"])
    delete_retention_ms: int = int(_DEFAULT["delete.retention.ms"])
    min_compaction_lag_ms: int = int(_DEFAULT["min.compaction.lag.ms"])
    min_cleanable_dirty_ratio: float = float(_DEFAULT["min.cleanable.dirty.ratio"])
    message_timestamp_before_max_ms: int = int(_DEFAULT["message.timestamp.before.max.ms"])
    message_timestamp_after_max_ms: int = int(_DEFAULT["message.timestamp.after.max.ms"])
    message_downconversion_enable: bool = _DEFAULT["message.downconversion.enable"] == "true"  # Fetch v0-v3
    producer_id_expiration_ms: int = default("producer.id.expiration.ms")  # a broker property

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @classmethod
    def from_properties(
        cls, overrides: Mapping[str, str] | None = None, defaults: Mapping[str, str] | None = None
    ) -> LogConfig:
        """Resolve topic overrides over broker defaults over Kafka's defaults (all validated)."""
        merged = dict(TOPIC_DEFAULTS)
        merged.update(validate_overrides(defaults or {}))
        merged.update(validate_overrides(overrides or {}))
        return cls(
            message_downconversion_enable=merged["message.downconversion.enable"].lower() == "true",
            segment_bytes=int(merged["segment.bytes"]),
            segment_ms=int(merged["segment.ms"]),
            retention_ms=int(merged["retention.ms"]),
            retention_bytes=int(merged["retention.bytes"]),
            max_message_bytes=int(merged["max.message.bytes"]),
            message_timestamp_type=merged["message.timestamp.type"],
            cleanup_policy=_policy(merged["cleanup.policy"]),
            flush_messages=int(merged["flush.messages"]),
            flush_ms=int(merged["flush.ms"]),
            index_interval_bytes=int(merged["index.interval.bytes"]),
            delete_retention_ms=int(merged["delete.retention.ms"]),
            min_compaction_lag_ms=int(merged["min.compaction.lag.ms"]),
            min_cleanable_dirty_ratio=float(merged["min.cleanable.dirty.ratio"]),
            message_timestamp_before_max_ms=int(merged["message.timestamp.before.max.ms"]),
            message_timestamp_after_max_ms=int(merged["message.timestamp.after.max.ms"]),
        )
