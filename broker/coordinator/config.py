"""The group coordinator's knobs: a typed view of the broker's `group.*` properties and their defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields

from kafkito.broker.config import Config, default

NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000  # Kafka's fixed join timeout for a new member (not a property)


@dataclass(slots=True, frozen=True)
class CoordinatorConfig:
    """`group.*` and `offset.metadata.max.bytes` settings; defaults from the broker's one table."""

    group_min_session_timeout_ms: int = default("group.min.session.timeout.ms")
    group_max_session_timeout_ms: int = default("group.max.session.timeout.ms")
    group_initial_rebalance_delay_ms: int = default("group.initial.rebalance.delay.ms")
    group_max_size: int = default("group.max.size")
    group_consumer_session_timeout_ms: int = default("group.consumer.session.timeout.ms")
    group_consumer_min_session_timeout_ms: int = default("group.consumer.min.session.timeout.ms")
    group_consumer_max_session_timeout_ms: int = default("group.consumer.max.session.timeout.ms")
    group_consumer_heartbeat_interval_ms: int = default("group.consumer.heartbeat.interval.ms")
    group_consumer_min_heartbeat_interval_ms: int = default("group.consumer.min.heartbeat.interval.ms")
    group_consumer_max_heartbeat_interval_ms: int = default("group.consumer.max.heartbeat.interval.ms")
    group_consumer_assignment_interval_ms: int = default("group.consumer.assignment.interval.ms")
    group_consumer_max_size: int = default("group.consumer.max.size")
    group_consumer_assignors: str = default("group.consumer.assignors")
    group_consumer_migration_policy: str = default("group.consumer.migration.policy")
    group_timeline_max_events: int = default("group.timeline.max.events")
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    offset_metadata_max_bytes: int = default("offset.metadata.max.bytes")

    @classmethod
    def from_config(cls, config: Config) -> CoordinatorConfig:
        """Take every knob the broker's Config has (same attribute names); keep defaults for the rest."""
        values = {f.name: getattr(config, f.name) for f in fields(cls) if hasattr(config, f.name)}
        return cls(**values)
