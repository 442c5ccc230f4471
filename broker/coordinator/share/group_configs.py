"""Per-group share configs (Kafka's GroupConfig for share groups, on a GROUP config resource):
session timeout and heartbeat interval within the broker's `group.share.min/max.*` bounds, and
`share.auto.offset.reset` (latest, earliest) for partitions a group starts to consume.

**kafkito**: the overrides live in memory and are lost on a restart (Kafka keeps them in its
metadata log), as for consumer groups (`consumer.group_configs`).
"""

from __future__ import annotations

from kafkito.broker.coordinator.share.config import (
    AUTO_OFFSET_RESET,
    HEARTBEAT_INTERVAL,
    RECORD_LOCK_DURATION,
    SESSION_TIMEOUT,
    ShareConfig,
)
from kafkito.protocol.errors import ErrorCode, KafkaError

AUTO_OFFSET_RESET_VALUES = ("earliest", "latest")


class ShareGroupConfigs:
    """Every share group's overrides, over the broker's defaults."""

    __slots__ = ("_config", "_overrides")

    def __init__(self, config: ShareConfig) -> None:
        self._config = config
        self._overrides: dict[str, dict[str, int | str]] = {}

    def defaults(self) -> dict[str, int | str]:
        c = self._config
        return {
            AUTO_OFFSET_RESET: "latest",
            HEARTBEAT_INTERVAL: c.group_share_heartbeat_interval_ms,
            RECORD_LOCK_DURATION: c.group_share_record_lock_duration_ms,
            SESSION_TIMEOUT: c.group_share_session_timeout_ms,
        }

    def value(self, group_id: str, name: str) -> int | str:
        return self._overrides.get(group_id, {}).get(name, self.defaults()[name])

    def session_timeout_ms(self, group_id: str) -> int:
        return int(self.value(group_id, SESSION_TIMEOUT))

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return int(self.value(group_id, HEARTBEAT_INTERVAL))

    def start_offset(self, group_id: str, log_offsets: tuple[int, int]) -> int:
        """Where a share partition starts: the log start (earliest) or end (latest, the default)."""
        earliest = self.value(group_id, AUTO_OFFSET_RESET) == "earliest"
        return log_offsets[0] if earliest else log_offsets[1]

    def set(self, group_id: str, name: str, value: str | None) -> None:
        """Set (or with None remove) one override; KafkaError(INVALID_CONFIG) when out of bounds."""
        overrides = self._overrides.setdefault(group_id, {})
        if value is None:
            overrides.pop(name, None)
            return
        overrides[name] = self._checked(name, value)

    def _checked(self, name: str, value: str) -> int | str:
        c = self._config
        if name == AUTO_OFFSET_RESET:
            if value not in AUTO_OFFSET_RESET_VALUES:
                raise _invalid(name, value)
            return value
        bounds = {
            SESSION_TIMEOUT: (c.group_share_min_session_timeout_ms, c.group_share_max_session_timeout_ms),
            HEARTBEAT_INTERVAL: (
                c.group_share_min_heartbeat_interval_ms,
                c.group_share_max_heartbeat_interval_ms,
            ),
            RECORD_LOCK_DURATION: (1000, 3_600_000),
        }
        if name not in bounds:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
        try:
            number = int(value)
        except ValueError:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}"
            ) from None
        low, high = bounds[name]
        if not low <= number <= high:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f"{name} must be greater than or equal to {low} and less than or equal to {high}",
            )
        return number


def _invalid(name: str, value: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}")
