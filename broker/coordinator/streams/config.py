"""Streams group settings: the broker's `group.streams.*` and the GROUP configs `streams.*`.

The broker-level values are Kafka 4.4's defaults unless the broker sets them; a group's own `streams.*`
configs (group_configs.py) override them within the broker's bounds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from kafkito.broker.coordinator.streams.group_configs import GROUP_CONFIG_NAMES, StreamsGroupConfigs

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
    rack_aware_assignment_tags: str = ""
    assignor_name: str = "sticky"  # the first of group.streams.assignors, kafkito's one assignor
    assignor_offload_enable: bool = True

    @classmethod
    def from_config(cls, config: Any) -> StreamsConfig:
        """Whatever `group_streams_<name>` attributes the broker's config has; defaults for the rest."""
        values = {
            f.name: getattr(config, f"group_streams_{f.name}")
            for f in fields(cls)
            if hasattr(config, f"group_streams_{f.name}")
        }
        return cls(**values)


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


__all__ = ["GROUP_CONFIG_NAMES", "GroupConfigsWithStreams", "StreamsConfig", "StreamsGroupConfigs"]
