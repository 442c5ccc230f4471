"""Heartbeat (12): keeps a member alive and tells it when a rebalance is under way.

v1 throttle time; v2 no change; v3 group_instance_id; v4 flexible. The hottest group API, so both
ends skip the codec: the request body is read by `decode` below and the response packed with `struct`
(kafka-python's decode cost more than the coordinator's work, its build + encode several times more).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkito.broker.context import RequestContext
from kafkito.protocol.codec import MalformedRequest
from kafkito.protocol.primitives import WireFormatError, read_compact_string, read_string, skip_tagged_fields

API_KEY = 12
VERSIONS = (0, 4)

_V0 = struct.Struct(">h")  # error_code
_V1 = struct.Struct(">ih")  # throttle_time_ms, error_code
_V4 = struct.Struct(">ihB")  # ... and an empty tagged-field section
_INT32 = struct.Struct(">i")


class HeartbeatRequestBody(NamedTuple):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None  # None before v3


_new_body = tuple.__new__  # builds a HeartbeatRequestBody without its Python-level __new__ (half the cost)


def decode(frame: bytes, offset: int, version: int) -> HeartbeatRequestBody:
    """Read a Heartbeat request body starting at `offset`: the same values kafka-python's decode gives.

    Like kafka-python: trailing bytes and unknown tagged fields are ignored. Unlike it (and like Kafka),
    a field that runs past the end of the frame is an error rather than a silently shortened string,
    and so is a null group_id or member_id (only group_instance_id may be null) and a tagged-field
    section over Kafka's limits (`skip_tagged_fields`). Raises MalformedRequest.
    """
    try:
        if version < 4:
            group_id, pos = read_string(frame, offset)
            (generation_id,) = _INT32.unpack_from(frame, pos)
            member_id, pos = read_string(frame, pos + 4)
            instance_id = read_string(frame, pos)[0] if version >= 3 else None
        else:
            group_id, pos = read_compact_string(frame, offset)
            (generation_id,) = _INT32.unpack_from(frame, pos)
            member_id, pos = read_compact_string(frame, pos + 4)
            instance_id, pos = read_compact_string(frame, pos)
            if frame[pos]:  # v4 defines no tagged fields: skip the unknown ones, checking their bounds
                skip_tagged_fields(frame, pos)
    except (IndexError, struct.error, WireFormatError) as exc:
        reason = f"{exc.__class__.__name__}: {exc}"
        raise MalformedRequest(f"cannot decode Heartbeat v{version}: {reason}") from exc
    if group_id is None or member_id is None:  # as the codec's null check (protocol/nullability.py)
        field = "group_id" if group_id is None else "member_id"
        raise MalformedRequest(f"Heartbeat: non-nullable field {field} was serialized as null")
    return _new_body(HeartbeatRequestBody, (group_id, generation_id, member_id, instance_id))


def handle(ctx: RequestContext, request: HeartbeatRequestBody) -> bytes:
    version = ctx.header.api_version
    error = ctx.groups.heartbeat(
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
