"""Codec facade over kafka-python's `kafka.protocol`: request decoding and response building/encoding."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import kafka.protocol.admin
import kafka.protocol.consumer
import kafka.protocol.metadata
import kafka.protocol.producer  # noqa: F401  (registers the message classes)
from kafka.protocol.api_message import ApiMessage

_HEADER_FIXED = struct.Struct(">hhih")


class MalformedRequest(Exception):
    """A frame that cannot be parsed as a request."""


def _all_messages() -> tuple[dict[int, Any], dict[int, Any]]:
    requests: dict[int, Any] = {}
    responses: dict[int, Any] = {}
    stack = list(ApiMessage.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is not None or cls._json is None:
            continue
        (requests if cls.is_request() else responses)[cls.API_KEY] = cls
    return requests, responses


REQUESTS, RESPONSES = _all_messages()
_versioned: dict[tuple[int, int, bool], Any] = {}


def request_class(api_key: int, version: int) -> Any:
    """The kafka-python request class of one version (cached)."""
    key = (api_key, version, True)
    cls = _versioned.get(key)
    if cls is None:
        cls = _versioned[key] = REQUESTS[api_key][version]
    return cls


def response_class(api_key: int, version: int) -> Any:
    """The kafka-python response class of one version (cached)."""
    key = (api_key, version, False)
    cls = _versioned.get(key)
    if cls is None:
        cls = _versioned[key] = RESPONSES[api_key][version]
    return cls


def is_flexible(api_key: int, version: int) -> bool:
    return bool(REQUESTS[api_key].flexible_version_q(version))


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


def peek_key_version(frame: bytes) -> tuple[int, int, int]:
    """api_key, api_version and correlation_id from the first 8 bytes of a request frame."""
    if len(frame) < 8:
        raise MalformedRequest(f"request frame of {len(frame)} bytes is shorter than a header")
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame, 0)
    return api_key, api_version, correlation_id


def _read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        if pos >= len(data):
            raise MalformedRequest("truncated varint in request header")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise MalformedRequest("varint too long in request header")


def parse_request_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Parse request header v1 (or v2 when `flexible`), skipping unknown tagged fields."""
    if len(frame) < 10:
        raise MalformedRequest(f"request frame of {len(frame)} bytes is shorter than a header")
    api_key, api_version, correlation_id, id_len = _HEADER_FIXED.unpack_from(frame, 0)
    pos = 10
    client_id: str | None = None
    if id_len >= 0:
        if pos + id_len > len(frame):
            raise MalformedRequest("client id runs past the end of the frame")
        try:
            client_id = frame[pos : pos + id_len].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedRequest("client id is not UTF-8") from exc
        pos += id_len
    elif id_len != -1:
        raise MalformedRequest(f"invalid client id length {id_len}")
    if flexible:
        count, pos = _read_uvarint(frame, pos)
        for _ in range(count):
            _tag, pos = _read_uvarint(frame, pos)
            size, pos = _read_uvarint(frame, pos)
            pos += size
            if pos > len(frame):
                raise MalformedRequest("tagged field runs past the end of the frame")
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def decode_request(frame: bytes, header: RequestHeader) -> Any:
    """Decode the body of a request whose header is already parsed."""
    cls = request_class(header.api_key, header.api_version)
    try:
        return cls.decode(memoryview(frame)[header.body_offset :], version=header.api_version)
    except (
        Exception
    ) as exc:  # kafka-python raises IndexError, ValueError, struct.error, UnicodeDecodeError...
        raise MalformedRequest(f"cannot decode {cls.__name__}: {exc.__class__.__name__}: {exc}") from exc


def _convert(field: Any, value: Any) -> Any:
    if value is None:
        return None
    if field.is_struct_array():
        cls = field.data_class
        return [cls(**_convert_fields(field, v)) if isinstance(v, dict) else v for v in value]
    if field.is_struct() and isinstance(value, dict):
        return field.data_class(**_convert_fields(field, value))
    return value


def _convert_fields(struct_field: Any, values: dict[str, Any]) -> dict[str, Any]:
    fields = struct_field.fields
    out: dict[str, Any] = {}
    for name, value in values.items():
        field = fields.get(name)
        if field is None:
            raise ValueError(f"{struct_field.name} has no field {name!r}")
        out[name] = _convert(field, value) if (field.is_struct() or field.is_struct_array()) else value
    return out


def build_request(api_key: int, version: int, **fields: Any) -> Any:
    """Build a request of one version from plain values; nested structs may be given as dicts (clients)."""
    cls = request_class(api_key, version)
    return cls(**_convert_fields(cls._struct, fields))


def build_response(api_key: int, version: int, **fields: Any) -> Any:
    """Build a response of one version from plain values; nested structs may be given as dicts."""
    cls = response_class(api_key, version)
    return cls(**_convert_fields(cls._struct, fields))


def encode_response(response: Any, correlation_id: int) -> bytes:
    """Encode a response (its version already set) with its header, size-prefixed."""
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True, framed=True))


_RESPONSE_HEADER_V0 = struct.Struct(">ii")
_RESPONSE_HEADER_V1 = struct.Struct(">iiB")


def frame_response_body(body: bytes, correlation_id: int, api_key: int, version: int) -> bytes:
    """Frame an already encoded response body (a hand-written hot-path encoder) with its header.

    Flexible versions take response header v1 (an empty tagged-field section), except ApiVersions.
    """
    if api_key != 18 and is_flexible(api_key, version):
        return _RESPONSE_HEADER_V1.pack(len(body) + 5, correlation_id, 0) + body
    return _RESPONSE_HEADER_V0.pack(len(body) + 4, correlation_id) + body


def response_has_field(api_key: int, version: int, name: str) -> bool:
    field = RESPONSES[api_key]._struct.fields.get(name)
    return field is not None and field.for_version_q(version)
