"""Per-group configuration (Kafka's GroupConfig, set on a GROUP config resource through
IncrementalAlterConfigs): a consumer group's own session timeout and heartbeat interval, within the
broker's `group.consumer.min/max.*` bounds.

The table here is the coordinator's, in memory; the shell saves each change before applying it and
restores the saved overrides at start (`broker/durable_group_configs.py`), as Kafka keeps them in its
metadata log.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.protocol.errors import ErrorCode, KafkaError

SESSION_TIMEOUT = "consumer.session.timeout.ms"
HEARTBEAT_INTERVAL = "consumer.heartbeat.interval.ms"
GROUP_CONFIG_NAMES = (HEARTBEAT_INTERVAL, SESSION_TIMEOUT)


class GroupConfigError(KafkaError):
    """A group config that does not exist or is out of bounds (INVALID_CONFIG)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)


class GroupConfigs:
    """Every group's overrides, over the broker's defaults."""

    __slots__ = ("_config", "_overrides")

    def __init__(self, config: CoordinatorConfig) -> None:
        self._config = config
        self._overrides: dict[str, dict[str, int]] = {}

    def defaults(self) -> dict[str, int]:
        return {
            HEARTBEAT_INTERVAL: self._config.group_consumer_heartbeat_interval_ms,
            SESSION_TIMEOUT: self._config.group_consumer_session_timeout_ms,
        }

    def session_timeout_ms(self, group_id: str) -> int:
        return self._value(group_id, SESSION_TIMEOUT)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._value(group_id, HEARTBEAT_INTERVAL)

    def _value(self, group_id: str, name: str) -> int:
        overrides = self._overrides.get(group_id)
        if overrides is not None and name in overrides:
            return overrides[name]
        return self.defaults()[name]

    def describe(self, group_id: str) -> list[tuple[str, int, bool]]:
        """(name, effective value, whether the group overrides it) for every group config."""
        overrides = self._overrides.get(group_id, {})
        return [
            (name, overrides.get(name, default), name in overrides)
            for name, default in sorted(self.defaults().items())
        ]

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        """Set and delete overrides (all or nothing); GroupConfigError names the first problem."""
        if not group_id:
            raise GroupConfigError("The group id must not be empty.")
        merged = dict(self._overrides.get(group_id, {}))
        for name in delete:
            _known(name)
            merged.pop(name, None)
        for name, raw in set_.items():
            _known(name)
            try:
                merged[name] = int(raw)
            except ValueError:
                raise GroupConfigError(
                    f"Invalid value {raw} for configuration {name}: not a number."
                ) from None
        self._check({**self.defaults(), **merged})
        if validate_only:
            return
        if merged:
            self._overrides[group_id] = merged
        else:
            self._overrides.pop(group_id, None)

    def _check(self, values: Mapping[str, int]) -> None:
        c = self._config
        bounds = {
            SESSION_TIMEOUT: (
                c.group_consumer_min_session_timeout_ms,
                c.group_consumer_max_session_timeout_ms,
            ),
            HEARTBEAT_INTERVAL: (
                c.group_consumer_min_heartbeat_interval_ms,
                c.group_consumer_max_heartbeat_interval_ms,
            ),
        }
        for name, (low, high) in bounds.items():
            if not low <= values[name] <= high:
                raise GroupConfigError(
                    f"{name} must be between {low} and {high} (inclusive), got {values[name]}."
                )
        if values[HEARTBEAT_INTERVAL] >= values[SESSION_TIMEOUT]:
            raise GroupConfigError(f"{HEARTBEAT_INTERVAL} must be less than {SESSION_TIMEOUT}.")


def _known(name: str) -> None:
    if name not in GROUP_CONFIG_NAMES:
        raise GroupConfigError(f"Unknown group config name: {name}")
