"""Fetch response bodies (v4-v17) encoded by hand, so record bytes are copied once into the answer.

The generic codec builds an object tree and copies each partition's records several times; Fetch
carries nearly all the bytes a broker sends, so it gets this struct encoder. It writes what the
codec would for the fields kafkito sets: the aborted transactions of a read_committed fetch (null
for read_uncommitted), no tagged fields.
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
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset
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
    last_stable_offset: int = -1  # -1: the high watermark
    aborted: Sequence[tuple[int, int]] | None = None  # (producer id, first offset); None is null


@dataclass(frozen=True, slots=True)
class TopicAnswer:
    name: str
    topic_id: uuid.UUID | None
    partitions: Sequence[PartitionAnswer]


def encode_fetch_response(version: int, session_id: int, topics: Sequence[TopicAnswer]) -> bytes:
    """The Fetch response body of `version` (after the response header)."""
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
            lso = hw if p.last_stable_offset < 0 else p.last_stable_offset
            if version >= 5:
                parts.append(part_struct.pack(p.partition_index, p.error_code, hw, lso, p.log_start_offset))
            else:
                parts.append(part_struct.pack(p.partition_index, p.error_code, hw, lso))
            records = p.records
            if flexible:
                aborted = _COMPACT_NULL if p.aborted is None else _aborted(p.aborted, True)
                parts.append(aborted + _NO_PREFERRED_REPLICA + uvarint(len(records) + 1))
                parts.append(records)
                parts.append(_NO_TAGS)
            else:
                aborted = _NULL_ARRAY if p.aborted is None else _aborted(p.aborted, False)
                tail = _NO_PREFERRED_REPLICA if version >= 11 else b""
                parts.append(aborted + tail + _I32.pack(len(records)))
                parts.append(records)
        if flexible:
            parts.append(_NO_TAGS)
    if flexible:
        parts.append(_NO_TAGS)
    return b"".join(parts)


def _aborted(entries: Sequence[tuple[int, int]], flexible: bool) -> bytes:
    """The aborted_transactions array: a count, then producer id and first offset of each entry
    (each followed by its empty tagged fields in flexible versions)."""
    if flexible:
        return uvarint(len(entries) + 1) + b"".join(_ABORTED.pack(*e) + _NO_TAGS for e in entries)
    return _I32.pack(len(entries)) + b"".join(_ABORTED.pack(*e) for e in entries)
