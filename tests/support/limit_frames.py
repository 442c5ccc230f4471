"""Request bodies and headers at and past Kafka 4.4's limits on declared counts (an array of 1,000,000
elements, a tagged-field section of 10,000 fields), built byte by byte: the codec cannot write a
count that disagrees with what follows it."""

from __future__ import annotations

import struct
from typing import Any

from kafkito.protocol.codec import build_request, is_flexible
from kafkito.protocol.primitives import MAX_ARRAY_LENGTH, MAX_TAGGED_FIELD_COUNT, compact_string, uvarint

FETCH, METADATA, FIND_COORDINATOR, HEARTBEAT = 1, 3, 10, 12
ARRAY_AT, ARRAY_ABOVE = MAX_ARRAY_LENGTH, MAX_ARRAY_LENGTH + 1
TAGS_AT, TAGS_ABOVE = MAX_TAGGED_FIELD_COUNT, MAX_TAGGED_FIELD_COUNT + 1


def header(api_key: int, version: int, correlation_id: int = 1, tags: bytes = b"\x00") -> bytes:
    """Request header v1, or v2 with `tags` as its tagged-field section for a flexible version."""
    head = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    return head + tags if is_flexible(api_key, version) else head


def tagged_section(count: int) -> bytes:
    """A section of `count` empty unknown tagged fields (tags 1000 and up)."""
    return uvarint(count) + b"".join(uvarint(1000 + i) + b"\x00" for i in range(count))


def fetch_forgetting(version: int, count: int, declared: int | None = None) -> bytes:
    """The body of a session-less Fetch of no topics that forgets `count` partitions of one topic, its
    partition array declaring `declared` elements (`count` when None): v11 has classic arrays, v12
    compact ones. Kafka and kafkito answer it with no partitions."""
    declared = count if declared is None else declared
    head = struct.pack(">iiiibii", -1, 0, 1, 1 << 20, 0, 0, -1)
    partitions = bytes(4 * count)
    if version < 12:
        topic = struct.pack(">iih", 0, 1, 1) + b"x" + struct.pack(">i", declared)
        return head + topic + partitions + struct.pack(">h", 0)
    topic = uvarint(1) + uvarint(2) + compact_string("x") + uvarint(declared + 1)
    return head + topic + partitions + b"\x00" + compact_string("") + b"\x00"


def _with_tags(api_key: int, version: int, tags: bytes, **fields: Any) -> bytes:
    body = bytes(build_request(api_key, version, **fields).encode())
    return body[:-1] + tags  # the body's own tagged-field section: its last byte, empty


def find_coordinator(group: str, tags: bytes = b"\x00") -> bytes:
    """A FindCoordinator v4 body (decoded by the codec) for one group, ending in `tags`."""
    return _with_tags(FIND_COORDINATOR, 4, tags, key_type=0, coordinator_keys=[group])


def heartbeat(group: str, tags: bytes = b"\x00") -> bytes:
    """A Heartbeat v4 body (read by its own decoder) of a member of `group`, ending in `tags`."""
    return _with_tags(
        HEARTBEAT, 4, tags, group_id=group, generation_id=1, member_id="m", group_instance_id=None
    )


def framed(request: bytes) -> bytes:
    return struct.pack(">i", len(request)) + request
