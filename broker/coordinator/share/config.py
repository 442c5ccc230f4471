"""The share group coordinator's knobs, with Kafka's names and defaults (`group.share.*`), and the
share-group configs of a GROUP resource (`share.session.timeout.ms`, `share.heartbeat.interval.ms`,
`share.auto.offset.reset`, ...), whose bounds are the broker's min/max."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(slots=True, frozen=True)
class ShareConfig:
    group_share_session_timeout_ms: int = 45_000
    group_share_min_session_timeout_ms: int = 45_000
    group_share_max_session_timeout_ms: int = 60_000
    group_share_heartbeat_interval_ms: int = 5_000
    group_share_min_heartbeat_interval_ms: int = 5_000
    group_share_max_heartbeat_interval_ms: int = 15_000
    group_share_max_size: int = 200
    group_share_record_lock_duration_ms: int = 30_000
    group_share_min_record_lock_duration_ms: int = 15_000
    group_share_max_record_lock_duration_ms: int = 60_000
    group_share_delivery_count_limit: int = 5
    group_share_partition_max_record_locks: int = 2_000

    @classmethod
    def from_config(cls, config: Any) -> ShareConfig:
        """The broker's `group.share.*` properties (a Config field, or a property kept in its `extra`);
        Kafka's defaults for the rest, and for values that are not integers."""
        values: dict[str, int] = {}
        extra = getattr(config, "extra", {})
        for f in fields(cls):
            value = getattr(config, f.name, None)
            if value is None:
                value = extra.get(f.name.replace("_", "."))
            try:
                if value is not None:
                    values[f.name] = int(value)
            except (TypeError, ValueError):
                continue
        return cls(**values)


SESSION_TIMEOUT = "share.session.timeout.ms"
HEARTBEAT_INTERVAL = "share.heartbeat.interval.ms"
AUTO_OFFSET_RESET = "share.auto.offset.reset"
RECORD_LOCK_DURATION = "share.record.lock.duration.ms"
ISOLATION_LEVEL = "share.isolation.level"
# KIP-1191: the group's dead-letter queue topic ("" for none) and whether its records copy the original
DLQ_TOPIC_NAME = "errors.deadletterqueue.topic.name"
DLQ_COPY_RECORD = "errors.deadletterqueue.copy.record.enable"
SHARE_GROUP_CONFIG_NAMES = (
    AUTO_OFFSET_RESET,
    DLQ_COPY_RECORD,
    DLQ_TOPIC_NAME,
    HEARTBEAT_INTERVAL,
    ISOLATION_LEVEL,
    RECORD_LOCK_DURATION,
    SESSION_TIMEOUT,
)
