"""The typed ConsumerGroupHeartbeat request the wire handler hands the coordinator (API 68)."""

from __future__ import annotations

import uuid
from typing import NamedTuple

OwnedPartitions = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]

JOIN_EPOCH = 0
"""member_epoch of a first heartbeat (joining)."""
LEAVE_EPOCH = -1
"""member_epoch of a member leaving the group."""
STATIC_LEAVE_EPOCH = -2
"""member_epoch of a static member leaving temporarily (its assignment is kept for its return)."""


class ConsumerHeartbeatRequest(NamedTuple):
    """One ConsumerGroupHeartbeat, decoded and version-defaulted.

    `None` (and -1 for `rebalance_timeout_ms`) means "unchanged since the last heartbeat", as on the
    wire; a first heartbeat (epoch 0) must carry the subscription and the rebalance timeout.
    """

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: tuple[str, ...] | None
    subscribed_topic_regex: str | None
    server_assignor: str | None
    owned_partitions: OwnedPartitions | None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 0
