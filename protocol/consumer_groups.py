"""Message classes of the KIP-848 APIs kafka-python lacks: ConsumerGroupHeartbeat (68) and
ConsumerGroupDescribe (69), built by kafka-python's own machinery from the JSON schemas in
`protocol/schemas/`, exactly as its shipped messages are. The codec imports this module on the first
request of either API (MESSAGES), after `kafkito.protocol.kafka_python` has deferred kafka's client init."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ConsumerGroupDescribeRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = [
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
]
