"""Message classes of the versions kafka-python 3.0.12 lacks of two group APIs: TxnOffsetCommit (28)
up to v6 (topic ids, KIP-1319) and DeleteGroups (42) up to v3 (a per-group error message), built by
kafka-python's machinery from Kafka 4.4's JSON schemas in `protocol/schemas/`. The codec imports this
module on the first request of either API (MESSAGES)."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class TxnOffsetCommitRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class TxnOffsetCommitResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class DeleteGroupsRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class DeleteGroupsResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = ["DeleteGroupsRequest", "DeleteGroupsResponse", "TxnOffsetCommitRequest", "TxnOffsetCommitResponse"]
