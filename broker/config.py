"""One broker configuration object, named with Kafka's property names (dots in files, underscores in code)."""

from __future__ import annotations

import builtins
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A property that does not exist or does not parse."""


_BOOL_TRUE = {"true", "1", "yes", "on"}
_BOOL_FALSE = {"false", "0", "no", "off"}


@dataclass(slots=True)
class Config:
    # listeners
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    advertised_port: int | None = None
    node_id: int = 1
    cluster_id: str | None = None
    # storage
    log_dirs: str = "./data"
    num_partitions: int = 1
    default_replication_factor: int = 1
    auto_create_topics_enable: bool = True
    delete_topic_enable: bool = True
    message_max_bytes: int = 1048588
    log_segment_bytes: int = 1073741824
    log_retention_ms: int | None = None
    log_retention_minutes: int | None = None
    log_retention_hours: int = 168
    log_retention_bytes: int = -1
    log_retention_check_interval_ms: int = 300000
    log_cleanup_policy: str = "delete"
    log_message_timestamp_type: str = "CreateTime"
    log_flush_interval_messages: int = 9223372036854775807
    log_flush_interval_ms: int | None = None
    log_cleaner_delete_retention_ms: int = 86400000
    log_cleaner_backoff_ms: int = 15000
    # network
    socket_request_max_bytes: int = 104857600
    # groups
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2147483647
    # offsets
    offsets_topic_num_partitions: int = 50
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600000
    offset_metadata_max_bytes: int = 4096
    offsets_topic_segment_bytes: int = 104857600
    offsets_commit_timeout_ms: int = 5000
    # anything else given (kept, so a server.properties written for Kafka loads)
    extra: dict[str, str] = field(default_factory=dict)
    # the Kafka names given explicitly (file, --set, flags): DescribeConfigs reports the others as defaults
    explicit: builtins.set[str] = field(default_factory=builtins.set)  # (`set` is a method here)

    @property
    def advertised(self) -> tuple[str, int]:
        return (self.advertised_host or self.host, self.advertised_port or self.port)

    @property
    def data_dir(self) -> Path:
        return Path(self.log_dirs.split(",")[0])

    @property
    def retention_ms(self) -> int:
        if self.log_retention_ms is not None:
            return self.log_retention_ms
        if self.log_retention_minutes is not None:
            return self.log_retention_minutes * 60_000
        return self.log_retention_hours * 3_600_000

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    def set(self, name: str, value: str) -> None:
        """Set one property by its Kafka name (`group.initial.rebalance.delay.ms`) from a string."""
        name = name.strip()
        value = value.strip()
        self.explicit.add(name)
        if name in ("listeners", "advertised.listeners"):
            host, port = _parse_listener(value)
            if name == "listeners":
                self.host, self.port = host, port
            else:
                self.advertised_host, self.advertised_port = host, port
            return
        attr = _ALIASES.get(name, name.replace(".", "_").replace("-", "_"))
        if attr in ("extra", "explicit") or attr not in _FIELD_TYPES:
            self.extra[name] = value
            return
        setattr(self, attr, _parse(name, value, _FIELD_TYPES[attr]))

    def update(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            self.set(name, value)

    def load_properties(self, path: str | Path) -> None:
        """Read a Java-style `server.properties` file."""
        for lineno, raw in enumerate(Path(path).read_text().splitlines(), 1):
            line = raw.strip()
            if not line or line[0] in "#!":
                continue
            sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
            if sep < 0:
                raise ConfigError(f"{path}:{lineno}: expected name=value, got {raw!r}")
            self.set(line[:sep], line[sep + 1 :])

    def to_properties(self) -> dict[str, Any]:
        """Every property by its Kafka name, defaults included."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name not in ("extra", "explicit"):
                out[_REVERSE_ALIASES.get(f.name, f.name.replace("_", "."))] = getattr(self, f.name)
        out.update(self.extra)
        return out

    def explicit_properties(self) -> dict[str, Any]:
        """Only the properties that were given (their effective values); the rest are Kafka's defaults."""
        props = self.to_properties()
        return {name: props[name] for name in self.explicit if name in props}


_ALIASES = {"broker.id": "node_id", "node.id": "node_id", "log.dir": "log_dirs"}
_REVERSE_ALIASES = {"node_id": "node.id"}
_FIELD_TYPES: dict[str, Any] = typing.get_type_hints(Config)


def _parse_listener(value: str) -> tuple[str, int]:
    first = value.split(",")[0]
    if "://" in first:
        first = first.split("://", 1)[1]
    host, _, port = first.rpartition(":")
    if not port.isdigit():
        raise ConfigError(f"listener {value!r} has no port")
    return host or "0.0.0.0", int(port)


def _parse(name: str, value: str, typ: Any) -> Any:
    if isinstance(typ, types.UnionType):
        if value.lower() in ("", "null", "none"):
            return None
        typ = next(t for t in typing.get_args(typ) if t is not type(None))
    try:
        if typ is bool:
            low = value.lower()
            if low in _BOOL_TRUE:
                return True
            if low in _BOOL_FALSE:
                return False
            raise ValueError(value)
        if typ is int:
            return int(value)
        return typ(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a valid {typ.__name__}") from exc
