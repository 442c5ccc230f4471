"""Message classes of the KIP-714 client telemetry APIs kafka-python lacks: GetTelemetrySubscriptions
(71) and PushTelemetry (72), built by kafka-python's own machinery from the JSON schemas in
`protocol/schemas/`, as `protocol.consumer_groups` builds its messages. The codec imports this module
on the first request of either API (MESSAGES)."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class GetTelemetrySubscriptionsRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class GetTelemetrySubscriptionsResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class PushTelemetryRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class PushTelemetryResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = [
    "GetTelemetrySubscriptionsRequest",
    "GetTelemetrySubscriptionsResponse",
    "PushTelemetryRequest",
    "PushTelemetryResponse",
]
