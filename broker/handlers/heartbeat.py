"""Heartbeat (12): keeps a member alive and tells it when a rebalance is under way.

v1 throttle time; v2 no change; v3 group_instance_id; v4 flexible. The hottest group API, so both
ends skip the codec: the request body is read by `decode` below and the response packed with `struct`
(kafka-python's decode cost more than the coordinator's work, its build + encode several times more).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkito.broker.context import RequestContext
from kafkito.protocol.codec import MalformedRequest, skip_tagged_fields

API_KEY = 12
VERSIONS = (0, 4)

_V0 = struct.Struct(">h")  # error_code
_V1 = struct.Struct(">ih")  # throttle_time_ms, error_code
_V4 = struct.Struct(">ihB")  # ... and an empty tagged-field section
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT32_INT16 = struct.Struct(">ih")


class HeartbeatRequestBody(NamedTuple):
    group_id: str | None
    generation_id: int
    member_id: str | None
    group_instance_id: str | None  # None before v3


_new_body = tuple.__new__  # builds a HeartbeatRequestBody without its Python-level __new__ (half the cost)


def decode(frame: bytes, offset: int, version: int) -> HeartbeatRequestBody:
    """Read a Heartbeat request body starting at `offset`: the same values kafka-python's decode gives.

    Like kafka-python: a negative string length reads as None, trailing bytes and unknown tagged fields
    are ignored. Unlike it (and like Kafka), a field that runs past the end of the frame is an error
    rather than a silently shortened string. Raises MalformedRequest.
    """
    try:
        if version < 4:
            return _decode_classic(frame, offset, version >= 3)
        # v4: compact strings (unsigned varint length + 1, 0 is null), then the tagged-field section.
        # Lengths under 128 take one byte: read inline, the rare longer ones by _uvarint.
        pos = offset
        size = frame[pos]
        if size < 0x80:
            pos += 1
        else:
            size, pos = _uvarint(frame, pos)
        group_id = None
        if size:
            end = pos + size - 1
            if end > len(frame):
                raise MalformedRequest("Heartbeat group_id runs past the end of the frame")
            group_id = frame[pos:end].decode()
            pos = end
        (generation_id,) = _INT32.unpack_from(frame, pos)
        pos += 4
        size = frame[pos]
        if size < 0x80:
            pos += 1
        else:
            size, pos = _uvarint(frame, pos)
        member_id = None
        if size:
            end = pos + size - 1
            if end > len(frame):
                raise MalformedRequest("Heartbeat member_id runs past the end of the frame")
            member_id = frame[pos:end].decode()
            pos = end
        size = frame[pos]
        if size < 0x80:
            pos += 1
        else:
            size, pos = _uvarint(frame, pos)
        instance_id = None
        if size:
            end = pos + size - 1
            if end > len(frame):
                raise MalformedRequest("Heartbeat group_instance_id runs past the end of the frame")
            instance_id = frame[pos:end].decode()
            pos = end
        if frame[pos]:  # v4 defines no tagged fields: skip the unknown ones, checking their bounds
            skip_tagged_fields(frame, pos)
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise MalformedRequest(
            f"cannot decode Heartbeat v{version}: {exc.__class__.__name__}: {exc}"
        ) from exc
    return _new_body(HeartbeatRequestBody, (group_id, generation_id, member_id, instance_id))


def _decode_classic(frame: bytes, pos: int, with_instance_id: bool) -> HeartbeatRequestBody:
    # v0-v3: INT16-length strings (a negative length is null); struct.error when a length is cut.
    (size,) = _INT16.unpack_from(frame, pos)
    pos += 2
    group_id = None
    if size >= 0:
        end = pos + size
        if end > len(frame):
            raise MalformedRequest("Heartbeat group_id runs past the end of the frame")
        group_id = frame[pos:end].decode()
        pos = end
    generation_id, size = _INT32_INT16.unpack_from(frame, pos)
    pos += 6
    member_id = None
    if size >= 0:
        end = pos + size
        if end > len(frame):
            raise MalformedRequest("Heartbeat member_id runs past the end of the frame")
        member_id = frame[pos:end].decode()
        pos = end
    instance_id = None
    if with_instance_id:
        (size,) = _INT16.unpack_from(frame, pos)
        pos += 2
        if size >= 0:
            end = pos + size
            if end > len(frame):
                raise MalformedRequest("Heartbeat group_instance_id runs past the end of the frame")
            instance_id = frame[pos:end].decode()
    return _new_body(HeartbeatRequestBody, (group_id, generation_id, member_id, instance_id))


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint as kafka-python's generated decoders read it (no length limit)."""
    value = 0
    shift = 0
    while True:
        b = frame[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def handle(ctx: RequestContext, request: HeartbeatRequestBody) -> bytes:
    version = ctx.header.api_version
    error = ctx.broker.coordinator.heartbeat(
        request.group_id,
        request.member_id or "",  # null and "" are both unknown members
        request.group_instance_id if version >= 3 else None,
        request.generation_id,
    )
    if version >= 4:
        return _V4.pack(0, error, 0)
    if version >= 1:
        return _V1.pack(0, error)
    return _V0.pack(error)
