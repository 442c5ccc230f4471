"""The group coordinator's knobs, with Kafka's property names and defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000


@dataclass(slots=True, frozen=True)
class CoordinatorConfig:
    """`group.*` and `offset.metadata.max.bytes` settings; the broker's Config builds one."""

    group_min_session_timeout_ms: int = 6_000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3_000
    group_max_size: int = 2**31 - 1
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    offset_metadata_max_bytes: int = 4_096

    # Kafka's property name -> attribute name, for building from a broker config.
    PROPERTY_NAMES = {
        "group.min.session.timeout.ms": "group_min_session_timeout_ms",
        "group.max.session.timeout.ms": "group_max_session_timeout_ms",
        "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
        "group.max.size": "group_max_size",
        "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    }

    @classmethod
    def from_config(cls, config: Any) -> CoordinatorConfig:
        """Take every knob the broker's Config has (same attribute names); keep defaults for the rest."""
        values = {f.name: getattr(config, f.name) for f in fields(cls) if hasattr(config, f.name)}
        return cls(**values)
