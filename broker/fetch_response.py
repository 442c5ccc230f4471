"""Fetch response bodies (v4-v17) encoded by hand, so record bytes are copied once into the answer.

The generic codec builds an object tree and copies each partition's records several times; Fetch
carries nearly all the bytes a broker sends, so it gets this struct encoder. It writes what the
codec would for the fields kafkito sets: no aborted transactions (null), no tagged fields.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from kafkito.protocol.primitives import compact_string, uvarint

_HEAD_V4 = struct.Struct(">i")  # throttle_time_ms
_HEAD_V7 = struct.Struct(">ihi")  # + error_code, session_id
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
# partition_index, error_code, high_watermark, last_stable_offset
_PART_V4 = struct.Struct(">ihqq")
_PART_V5 = struct.Struct(">ihqqq")  # + log_start_offset
_NULL_ARRAY = _I32.pack(-1)  # aborted_transactions: null
_NO_PREFERRED_REPLICA = _I32.pack(-1)
_COMPACT_NULL = b"\x00"
_NO_TAGS = b"\x00"

FIRST_FLEXIBLE = 12
FIRST_TOPIC_ID = 13


@dataclass(frozen=True, slots=True)
class PartitionAnswer:
    partition_index: int
    error_code: int
    high_watermark: int
    log_start_offset: int
    records: bytes


@dataclass(frozen=True, slots=True)
class TopicAnswer:
    name: str
    topic_id: uuid.UUID | None
    partitions: Sequence[PartitionAnswer]


def encode_fetch_response(version: int, session_id: int, topics: Sequence[TopicAnswer]) -> bytes:
    """The Fetch response body of `version` (after the response header); last stable offset = high
    watermark, as there are no transactions."""
    flexible = version >= FIRST_FLEXIBLE
    parts: list[bytes] = [_HEAD_V7.pack(0, 0, session_id) if version >= 7 else _HEAD_V4.pack(0)]
    parts.append(uvarint(len(topics) + 1) if flexible else _I32.pack(len(topics)))
    part_struct = _PART_V5 if version >= 5 else _PART_V4
    for topic in topics:
        if version >= FIRST_TOPIC_ID:
            parts.append((topic.topic_id or uuid.UUID(int=0)).bytes)
        elif flexible:
            parts.append(compact_string(topic.name))
        else:
            name = topic.name.encode()
            parts.append(_I16.pack(len(name)) + name)
        parts.append(uvarint(len(topic.partitions) + 1) if flexible else _I32.pack(len(topic.partitions)))
        for p in topic.partitions:
            hw = p.high_watermark
            if version >= 5:
                parts.append(part_struct.pack(p.partition_index, p.error_code, hw, hw, p.log_start_offset))
            else:
                parts.append(part_struct.pack(p.partition_index, p.error_code, hw, hw))
            records = p.records
            if flexible:
                parts.append(_COMPACT_NULL + _NO_PREFERRED_REPLICA + uvarint(len(records) + 1))
                parts.append(records)
                parts.append(_NO_TAGS)
            else:
                tail = _NO_PREFERRED_REPLICA if version >= 11 else b""
                parts.append(_NULL_ARRAY + tail + _I32.pack(len(records)))
                parts.append(records)
        if flexible:
            parts.append(_NO_TAGS)
    if flexible:
        parts.append(_NO_TAGS)
    return b"".join(parts)
