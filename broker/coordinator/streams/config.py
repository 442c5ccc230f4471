"""Streams group settings: the broker's `group.streams.*` and the GROUP configs `streams.*`.

The broker-level values are Kafka 4.4's defaults unless the broker sets them; a group's own config
(`streams.num.standby.replicas`, `streams.session.timeout.ms`, `streams.heartbeat.interval.ms`)
overrides them within the broker's bounds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

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
    min_task_offset_interval_ms: int = 15_000
    initial_rebalance_delay_ms: int = 3_000
    assignment_interval_ms: int = 1_000
    min_assignment_interval_ms: int = 0
    max_assignment_interval_ms: int = 15_000

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

    def initial_rebalance_delay_ms(self, group_id: str) -> int:
        return self._get(group_id, "initial_rebalance_delay_ms")

    def assignment_interval_ms(self, group_id: str) -> int:
        return self._get(group_id, "assignment_interval_ms")

    def assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """What the group metadata record keeps of the configs its last assignment used."""
        return (("num.standby.replicas", str(self.num_standby_replicas(group_id))),)

    # -- the GROUP config resource (DescribeConfigs, IncrementalAlterConfigs) --------------------

    def describe(self, group_id: str) -> list[tuple[str, int | str, bool]]:
        """(name, effective value, whether the group overrides it) for every streams group config."""
        overrides = self._groups.get(group_id, {})
        return [
            (name, self._get(group_id, attribute), attribute in overrides)
            for name, attribute in sorted(GROUP_CONFIG_NAMES.items())
        ]

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        """Set and delete overrides (all or nothing); GroupConfigError names the first problem."""
        from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError

        values: dict[str, int | None] = dict.fromkeys(delete)
        for name, raw in set_.items():
            try:
                values[name] = int(raw)
            except ValueError:
                raise GroupConfigError(
                    f"Invalid value {raw} for configuration {name}: not a number."
                ) from None
        for name, value in values.items():
            attribute = GROUP_CONFIG_NAMES.get(name)
            if attribute is None:
                raise GroupConfigError(f"Unknown group config name: {name}")
            low, high = self._bounds(attribute)
            if value is not None and not low <= value <= high:
                raise GroupConfigError(f"{name} must be between {low} and {high} (inclusive), got {value}.")
        if not validate_only:
            for name, value in values.items():
                self.set(group_id, name, value)


class GroupConfigsWithStreams:
    """The GROUP config resource: the other group types' configs and the `streams.*` ones, described
    together and altered all or nothing."""

    __slots__ = ("_others", "_streams")

    def __init__(self, others: GroupConfigTable, streams: StreamsGroupConfigs) -> None:
        self._others = others
        self._streams = streams

    def describe(self, group_id: str) -> list[tuple[str, int | str, bool]]:
        return sorted([*self._others.describe(group_id), *self._streams.describe(group_id)])

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        def streams(name: str) -> bool:
            return name.startswith("streams.")

        mine = {n: v for n, v in set_.items() if streams(n)}, [n for n in delete if streams(n)]
        others = {n: v for n, v in set_.items() if not streams(n)}, [n for n in delete if not streams(n)]
        if any(mine):
            self._streams.alter(group_id, *mine, validate_only=True)
        if any(others) or not any(mine):
            self._others.alter(group_id, *others, validate_only=validate_only)
        if any(mine) and not validate_only:
            self._streams.alter(group_id, *mine)


class GroupConfigTable(Protocol):
    def describe(self, group_id: str) -> Sequence[tuple[str, int | str, bool]]: ...

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None: ...
