"""GetTelemetrySubscriptions (71, KIP-714): the client metrics a client should push, as a Kafka broker
with no telemetry exporter plugin and no client-metrics subscription answers.

Such a broker does not advertise the API in ApiVersions (Kafka lists 71 and 72 only when an exporter
is configured), so clients do not ask; one that asks anyway gets what Kafka's ClientMetricsManager
gives: a client instance id (a new one for a zero id), a subscription id, the compression types
accepted for pushes (zstd, lz4, gzip, snappy), the default push interval (5 min), the default
`telemetry.max.bytes` (1 MiB), delta temporality, and no requested metrics, so the client pushes none.

v0 only (flexible).
"""

from __future__ import annotations

import uuid
import zlib
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 71
VERSIONS = (0, 0)

ZERO_ID = uuid.UUID(int=0)
ACCEPTED_COMPRESSION_TYPES = [4, 3, 1, 2]  # zstd, lz4, gzip, snappy
PUSH_INTERVAL_MS = 300_000
TELEMETRY_MAX_BYTES = 1024 * 1024
NO_METRICS: list[str] = []


def subscription_id(metrics: list[str], push_interval_ms: int) -> int:
    """A stable id of a subscription (what it asks for), as a signed 32-bit number."""
    digest = zlib.crc32(f"{','.join(metrics)}|{push_interval_ms}".encode())
    return digest - (1 << 32) if digest >= 1 << 31 else digest


class GetTelemetrySubscriptionsRequest(Protocol):
    client_instance_id: uuid.UUID


def handle(ctx: RequestContext, request: GetTelemetrySubscriptionsRequest) -> Any:
    instance = request.client_instance_id
    if instance is None or instance == ZERO_ID:
        instance = uuid.uuid4()
    return ctx.response(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        client_instance_id=instance,
        subscription_id=subscription_id(NO_METRICS, PUSH_INTERVAL_MS),
        accepted_compression_types=ACCEPTED_COMPRESSION_TYPES,
        push_interval_ms=PUSH_INTERVAL_MS,
        telemetry_max_bytes=TELEMETRY_MAX_BYTES,
        delta_temporality=True,
        requested_metrics=NO_METRICS,
    )
