"""Streams group settings: the broker's `group.streams.*` and the GROUP configs `streams.*`.

The broker-level values are Kafka 4.4's defaults unless the broker sets them; a group's own config
(`streams.num.standby.replicas`, `streams.session.timeout.ms`, `streams.heartbeat.interval.ms`)
overrides them within the broker's bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

MAX_INT = 2**31 - 1


@dataclass(slots=True, frozen=True)
class StreamsConfig:
    """`group.streams.*` (attribute names as the broker Config's, without the `group_streams_` prefix)."""

    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    max_size: int = MAX_INT
    num_standby_replicas: int = 0
    max_standby_replicas: int = 2
    num_warmup_replicas: int = 2
    max_warmup_replicas: int = 20
    acceptable_recovery_lag: int = 10_000
    task_offset_interval_ms: int = 60_000

    @classmethod
    def from_config(cls, config: Any) -> StreamsConfig:
        """Whatever `group_streams_<name>` attributes the broker's config has; defaults for the rest."""
        values = {
            f.name: getattr(config, f"group_streams_{f.name}")
            for f in fields(cls)
            if hasattr(config, f"group_streams_{f.name}")
        }
        return cls(**values)


GROUP_CONFIG_NAMES = {
    "streams.session.timeout.ms": "session_timeout_ms",
    "streams.heartbeat.interval.ms": "heartbeat_interval_ms",
    "streams.num.standby.replicas": "num_standby_replicas",
}


class StreamsGroupConfigs:
    """The GROUP configs of streams groups, over the broker's values."""

    __slots__ = ("_groups", "config")

    def __init__(self, config: StreamsConfig) -> None:
        self.config = config
        self._groups: dict[str, dict[str, int]] = {}

    def set(self, group_id: str, name: str, value: int | None) -> str | None:
        """Set (None: remove) one config of a group; the reason it is refused, or None."""
        attribute = GROUP_CONFIG_NAMES.get(name)
        if attribute is None:
            return f"Unknown group config name: {name}"
        if value is not None:
            low, high = self._bounds(attribute)
            if not low <= value <= high:
                return f"Invalid value {value} for configuration {name}: must be in [{low}, {high}]"
        configs = self._groups.setdefault(group_id, {})
        if value is None:
            configs.pop(attribute, None)
        else:
            configs[attribute] = value
        return None

    def _bounds(self, attribute: str) -> tuple[int, int]:
        c = self.config
        if attribute == "session_timeout_ms":
            return c.min_session_timeout_ms, c.max_session_timeout_ms
        if attribute == "heartbeat_interval_ms":
            return c.min_heartbeat_interval_ms, c.max_heartbeat_interval_ms
        return 0, c.max_standby_replicas

    def _get(self, group_id: str, attribute: str) -> int:
        value = self._groups.get(group_id, {}).get(attribute)
        return value if value is not None else int(getattr(self.config, attribute))

    def session_timeout_ms(self, group_id: str) -> int:
        return self._get(group_id, "session_timeout_ms")

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._get(group_id, "heartbeat_interval_ms")

    def num_standby_replicas(self, group_id: str) -> int:
        return self._get(group_id, "num_standby_replicas")

    def assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """What the group metadata record keeps of the configs its last assignment used."""
        return (("num.standby.replicas", str(self.num_standby_replicas(group_id))),)
