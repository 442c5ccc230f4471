"""The typed StreamsGroupHeartbeat request and its answer (API 88), as the coordinator sees them."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkito.broker.coordinator.streams.internal_topics import InternalTopic
from kafkito.broker.coordinator.streams.tasks import WireTasks
from kafkito.broker.coordinator.streams.topology import StreamsTopology
from kafkito.protocol.errors import ErrorCode

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2

Endpoint = tuple[str, int]
TopicPartitions = tuple[tuple[str, tuple[int, ...]], ...]


class StreamsHeartbeatRequest(NamedTuple):
    """One StreamsGroupHeartbeat; None means "unchanged since the last heartbeat", as on the wire."""

    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology: StreamsTopology | None = None
    active_tasks: WireTasks | None = None
    standby_tasks: WireTasks | None = None
    warmup_tasks: WireTasks | None = None
    process_id: str | None = None
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] | None = None
    shutdown_application: bool = False
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1


class Status(NamedTuple):
    code: int
    detail: str


class EndpointToPartitions(NamedTuple):
    """Interactive queries: which source partitions a member's endpoint serves."""

    user_endpoint: Endpoint
    active_partitions: TopicPartitions
    standby_partitions: TopicPartitions


class StreamsHeartbeatResult(NamedTuple):
    """StreamsGroupHeartbeat's answer; task lists None mean unchanged since last sent (or an error)."""

    error: ErrorCode
    error_message: str | None = None
    member_id: str = ""
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    acceptable_recovery_lag: int = -1
    task_offset_interval_ms: int = 0
    status: tuple[Status, ...] | None = None
    active_tasks: WireTasks | None = None
    standby_tasks: WireTasks | None = None
    warmup_tasks: WireTasks | None = None
    endpoint_information_epoch: int = 0
    partitions_by_user_endpoint: tuple[EndpointToPartitions, ...] | None = None
    internal_topics_to_create: tuple[InternalTopic, ...] = ()


StreamsHeartbeatCallback = Callable[[StreamsHeartbeatResult], None]
