"""Message classes of ApiVersions (18) up to v5 (KIP-1242: the request names the cluster and node the
client means to reach), which kafka-python 3.0.12 lacks, built by kafka-python's machinery from Kafka
4.4's JSON schemas in `protocol/schemas/`. As kafka-python's own classes, the response's header is never
flexible, and an UNSUPPORTED_VERSION answer (or a body that does not parse at the version asked) is
read as v0, as Kafka's client reads it (KIP-511). The codec imports this module on the first
ApiVersions request or response (MESSAGES)."""

from __future__ import annotations

import io
from typing import Any

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import Int16, Int32

_SCHEMAS = "kafkito.protocol.schemas"
UNSUPPORTED_VERSION = 35


class ApiVersionsRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ApiVersionsResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    @classmethod
    def parse_header(cls, data: Any, version: int | None = None) -> Any:
        return cls.header_class.decode(data, flexible=False)

    def encode_header(self, flexible: bool = False) -> Any:
        return super().encode_header(flexible=False)

    @classmethod
    def decode(cls, data: Any, version: int | None = None, header: bool = False, framed: bool = False) -> Any:
        if not hasattr(data, "tell"):
            data = io.BytesIO(data)
        if framed:
            Int32.decode(data)
        parsed_header = cls.parse_header(data) if header else None
        start = data.tell()
        if Int16.decode(data) == UNSUPPORTED_VERSION:
            version = 0  # KIP-511: a version the broker lacks is answered in v0's layout
        data.seek(start)
        try:
            answer = super().decode(data, version=version, header=False, framed=False)
        except Exception:  # as Kafka's client: a body that does not parse is read again as v0
            if version == 0:
                raise
            data.seek(start)
            answer = super().decode(data, version=0, header=False, framed=False)
        if parsed_header is not None:
            answer._header = parsed_header
        return answer


__all__ = ["ApiVersionsRequest", "ApiVersionsResponse"]
