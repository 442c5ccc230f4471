"""Message classes of the KIP-932 share-partition APIs kafka-python lacks: ShareFetch (78) and
ShareAcknowledge (79), built by kafka-python's machinery from kafkito's own JSON schemas in
`protocol/schemas/` (as `protocol.consumer_groups` does for 68/69). The codec imports this module on
the first request of either API."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class ShareFetchRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ShareFetchResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ShareAcknowledgeRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ShareAcknowledgeResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = ["ShareAcknowledgeRequest", "ShareAcknowledgeResponse", "ShareFetchRequest", "ShareFetchResponse"]
