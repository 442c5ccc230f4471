"""Per-group share configs (Kafka's GroupConfig for share groups, on a GROUP config resource):
`share.session.timeout.ms`, `share.heartbeat.interval.ms` and `share.record.lock.duration.ms`, each
within the broker's `group.share.min/max.*` bounds, `share.auto.offset.reset` (latest, the default,
or earliest) for partitions a group starts to consume, `share.isolation.level`
(read_uncommitted, the default, or read_committed) for what its share fetches may acquire, and the
group's dead-letter queue (KIP-1191): `errors.deadletterqueue.topic.name` (none when blank; a name
starting with `__` is refused) and `errors.deadletterqueue.copy.record.enable` (`broker/share/
dead_letters.py` writes to it).

Kept across restarts by the shell, as for consumer groups (`broker/durable_group_configs.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError
from kafkito.broker.coordinator.share.config import (
    AUTO_OFFSET_RESET,
    DLQ_COPY_RECORD,
    DLQ_TOPIC_NAME,
    HEARTBEAT_INTERVAL,
    ISOLATION_LEVEL,
    RECORD_LOCK_DURATION,
    SESSION_TIMEOUT,
    ShareConfig,
)

AUTO_OFFSET_RESET_VALUES = ("earliest", "latest")
ISOLATION_LEVEL_VALUES = ("read_committed", "read_uncommitted")
Value = int | str | bool
_CHOICES = {AUTO_OFFSET_RESET: AUTO_OFFSET_RESET_VALUES, ISOLATION_LEVEL: ISOLATION_LEVEL_VALUES}
# The configs of share groups whose names do not start with `share.`
OTHER_NAMES = frozenset((DLQ_TOPIC_NAME, DLQ_COPY_RECORD))


class ShareGroupConfigs:
    """Every share group's overrides, over the broker's defaults."""

    __slots__ = ("_config", "_overrides")

    def __init__(self, config: ShareConfig) -> None:
        self._config = config
        self._overrides: dict[str, dict[str, Value]] = {}

    def defaults(self) -> dict[str, Value]:
        c = self._config
        return {
            AUTO_OFFSET_RESET: "latest",
            DLQ_COPY_RECORD: False,
            DLQ_TOPIC_NAME: "",
            ISOLATION_LEVEL: "read_uncommitted",
            HEARTBEAT_INTERVAL: c.group_share_heartbeat_interval_ms,
            RECORD_LOCK_DURATION: c.group_share_record_lock_duration_ms,
            SESSION_TIMEOUT: c.group_share_session_timeout_ms,
        }

    def value(self, group_id: str, name: str) -> Value:
        return self._overrides.get(group_id, {}).get(name, self.defaults()[name])

    def session_timeout_ms(self, group_id: str) -> int:
        return int(self.value(group_id, SESSION_TIMEOUT))

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return int(self.value(group_id, HEARTBEAT_INTERVAL))

    def read_committed(self, group_id: str) -> bool:
        """Whether the group's share fetches stop at the last stable offset and skip aborted records."""
        return self.value(group_id, ISOLATION_LEVEL) == "read_committed"

    def start_offset(self, group_id: str, log_offsets: tuple[int, int]) -> int:
        """Where a share partition starts: the log start (earliest) or end (latest, the default)."""
        earliest = self.value(group_id, AUTO_OFFSET_RESET) == "earliest"
        return log_offsets[0] if earliest else log_offsets[1]

    def dead_letter_topic(self, group_id: str) -> str:
        """The group's dead-letter queue topic; "" when it has none (blank)."""
        return str(self.value(group_id, DLQ_TOPIC_NAME)).strip()

    def copy_to_dead_letters(self, group_id: str) -> bool:
        """Whether the group's dead-letter records carry the original record's key and value."""
        return self.value(group_id, DLQ_COPY_RECORD) is True

    def describe(self, group_id: str) -> list[tuple[str, Value, bool]]:
        """(name, effective value, whether the group overrides it) for every share group config."""
        overrides = self._overrides.get(group_id, {})
        return [(n, overrides.get(n, d), n in overrides) for n, d in sorted(self.defaults().items())]

    def set(self, group_id: str, name: str, value: str | None) -> None:
        """Set (or with None remove) one override; GroupConfigError when it is not valid."""
        if value is None:
            self.alter(group_id, {}, [name])
        else:
            self.alter(group_id, {name: value}, ())

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        """Set and delete overrides (all or nothing); GroupConfigError names the first problem."""
        if not group_id:
            raise GroupConfigError("The group id must not be empty.")
        merged = dict(self._overrides.get(group_id, {}))
        for name in delete:
            self._known(name)
            merged.pop(name, None)
        for name, raw in set_.items():
            merged[name] = self._parsed(name, raw)
        self._check({**self.defaults(), **merged})
        if validate_only:
            return
        if merged:
            self._overrides[group_id] = merged
        else:
            self._overrides.pop(group_id, None)

    def _known(self, name: str) -> None:
        if name not in self.defaults():
            raise GroupConfigError(f"Unknown group config name: {name}")

    def _parsed(self, name: str, raw: str) -> Value:
        self._known(name)
        if name == DLQ_TOPIC_NAME:
            if raw.strip().startswith("__"):
                raise GroupConfigError(f"{name}: a dead-letter queue topic's name must not start with '__'")
            return raw
        if name == DLQ_COPY_RECORD:
            flag = raw.strip().lower()
            if flag not in ("true", "false"):
                raise GroupConfigError(f"Invalid value {raw} for configuration {name}: true or false.")
            return flag == "true"
        choices = _CHOICES.get(name)
        if choices is not None:
            if raw not in choices:
                raise GroupConfigError(
                    f"Invalid value {raw} for configuration {name}: must be one of {', '.join(choices)}."
                )
            return raw
        try:
            return int(raw)
        except ValueError:
            raise GroupConfigError(f"Invalid value {raw} for configuration {name}: not a number.") from None

    def _check(self, values: Mapping[str, Value]) -> None:
        c = self._config
        bounds = {
            SESSION_TIMEOUT: (c.group_share_min_session_timeout_ms, c.group_share_max_session_timeout_ms),
            HEARTBEAT_INTERVAL: (
                c.group_share_min_heartbeat_interval_ms,
                c.group_share_max_heartbeat_interval_ms,
            ),
            RECORD_LOCK_DURATION: (
                c.group_share_min_record_lock_duration_ms,
                c.group_share_max_record_lock_duration_ms,
            ),
        }
        for name, (low, high) in bounds.items():
            value = int(values[name])
            if not low <= value <= high:
                raise GroupConfigError(f"{name} must be between {low} and {high} (inclusive), got {value}.")
        if int(values[HEARTBEAT_INTERVAL]) >= int(values[SESSION_TIMEOUT]):
            raise GroupConfigError(f"{HEARTBEAT_INTERVAL} must be less than {SESSION_TIMEOUT}.")


class ConsumerConfigs(Protocol):
    """What `AllGroupConfigs` needs of the consumer group configs (`consumer.group_configs`)."""

    def describe(self, group_id: str) -> Sequence[tuple[str, Value, bool]]: ...

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None: ...


class AllGroupConfigs:
    """The GROUP config resource: consumer-group configs (`consumer.*`) and share-group configs
    (`share.*`), described together and altered all or nothing."""

    __slots__ = ("_consumer", "_share")

    def __init__(self, consumer: ConsumerConfigs, share: ShareGroupConfigs) -> None:
        self._consumer = consumer
        self._share = share

    def describe(self, group_id: str) -> list[tuple[str, Value, bool]]:
        rows: list[tuple[str, Value, bool]] = [
            *self._consumer.describe(group_id),
            *self._share.describe(group_id),
        ]
        return sorted(rows)

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        def share(name: str) -> bool:
            return name.startswith("share.") or name in OTHER_NAMES

        parts: list[tuple[ConsumerConfigs, dict[str, str], list[str]]] = [
            (
                self._consumer,
                {n: v for n, v in set_.items() if not share(n)},
                [n for n in delete if not share(n)],
            ),
            (self._share, {n: v for n, v in set_.items() if share(n)}, [n for n in delete if share(n)]),
        ]
        for configs, to_set, to_delete in parts:  # both checked before either changes
            if to_set or to_delete:
                configs.alter(group_id, to_set, to_delete, True)
        if not validate_only:
            for configs, to_set, to_delete in parts:
                if to_set or to_delete:
                    configs.alter(group_id, to_set, to_delete, False)
