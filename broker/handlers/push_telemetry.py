"""PushTelemetry (72, KIP-714): a client's metrics, answered as a Kafka broker with no telemetry
exporter plugin answers: the push is checked as Kafka's ClientMetricsManager checks it and the
metrics go nowhere.

A zero (reserved) client instance id is INVALID_REQUEST; a subscription id that is not the current
one is UNKNOWN_SUBSCRIPTION_ID (the client fetches its subscription again); a compression type other
than none and the accepted ones is UNSUPPORTED_COMPRESSION_TYPE; a payload above
`telemetry.max.bytes` is TELEMETRY_TOO_LARGE; anything else is accepted and dropped.

v0 only (flexible).
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.get_telemetry_subscriptions import (
    ACCEPTED_COMPRESSION_TYPES,
    NO_METRICS,
    PUSH_INTERVAL_MS,
    TELEMETRY_MAX_BYTES,
    ZERO_ID,
    subscription_id,
)
from kafkito.protocol.errors import ErrorCode

API_KEY = 72
VERSIONS = (0, 0)

_NONE = 0


class PushTelemetryRequest(Protocol):
    client_instance_id: uuid.UUID
    subscription_id: int
    terminating: bool
    compression_type: int
    metrics: bytes


def _check(request: PushTelemetryRequest) -> ErrorCode:
    if request.client_instance_id is None or request.client_instance_id == ZERO_ID:
        return ErrorCode.INVALID_REQUEST
    if request.subscription_id != subscription_id(NO_METRICS, PUSH_INTERVAL_MS):
        return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    if request.compression_type != _NONE and request.compression_type not in ACCEPTED_COMPRESSION_TYPES:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    if len(request.metrics or b"") > TELEMETRY_MAX_BYTES:
        return ErrorCode.TELEMETRY_TOO_LARGE
    return ErrorCode.NONE


def handle(ctx: RequestContext, request: PushTelemetryRequest) -> Any:
    return ctx.response(throttle_time_ms=0, error_code=_check(request))
