"""The share-partition properties, with Kafka's names and defaults, read from the broker's config."""

from __future__ import annotations

from typing import Any

from kafkito.broker.share.partition import ShareLimits
from kafkito.broker.share.properties import PROPERTIES
from kafkito.broker.share.state_log import StateLogConfig


def _value(config: Any, name: str) -> int:
    attribute = getattr(config, name.replace(".", "_"), None)
    if isinstance(attribute, int):
        return attribute
    raw = getattr(config, "extra", {}).get(name)  # a property Config has no field for is kept here
    try:
        return int(raw) if raw is not None else PROPERTIES[name]
    except (TypeError, ValueError):
        return PROPERTIES[name]


def share_settings(config: Any) -> tuple[ShareLimits, StateLogConfig]:
    """The broker's share limits and `__share_group_state` settings."""
    limits = ShareLimits(
        _value(config, "group.share.record.lock.duration.ms"),
        _value(config, "group.share.delivery.count.limit"),
        _value(config, "group.share.partition.max.record.locks"),
    )
    state = StateLogConfig(
        _value(config, "share.coordinator.state.topic.num.partitions"),
        _value(config, "share.coordinator.state.topic.segment.bytes"),
        _value(config, "share.coordinator.snapshot.update.records.per.snapshot"),
        _value(config, "share.coordinator.state.topic.prune.interval.ms"),
        _value(config, "share.coordinator.cold.partition.snapshot.interval.ms"),
    )
    return limits, state
