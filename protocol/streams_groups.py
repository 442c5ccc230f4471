"""Message classes of the KIP-1071 streams-group APIs kafka-python lacks: StreamsGroupHeartbeat (88),
StreamsGroupDescribe (89) and StreamsGroupTopologyDescriptionUpdate (93), built by kafka-python's
machinery from Kafka 4.4's JSON schemas in `protocol/schemas/` (as `protocol.share_groups` does for
the share-group APIs). The codec imports this module on the first request of any of them."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class StreamsGroupHeartbeatRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class StreamsGroupHeartbeatResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class StreamsGroupDescribeRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class StreamsGroupDescribeResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class StreamsGroupTopologyDescriptionUpdateRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class StreamsGroupTopologyDescriptionUpdateResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = [
    "StreamsGroupDescribeRequest",
    "StreamsGroupDescribeResponse",
    "StreamsGroupHeartbeatRequest",
    "StreamsGroupHeartbeatResponse",
    "StreamsGroupTopologyDescriptionUpdateRequest",
    "StreamsGroupTopologyDescriptionUpdateResponse",
]
