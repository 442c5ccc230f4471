"""Fetch response bodies (v4-v18) encoded by hand, with the record bytes left where they are.

The generic codec builds an object tree and copies each partition's records several times; Fetch
carries nearly all the bytes a broker sends, so it gets this struct encoder. It writes what the
codec would for the fields kafkito sets: the aborted transactions of a read_committed fetch (null
for read_uncommitted), no tagged fields. Records still in their segment file (a FileRegion) make
the body a Spliced one, which the connection sends with sendfile.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from kafkito.broker.log.region import FileRegion
from kafkito.broker.spliced import Piece, Spliced
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
    records: bytes | FileRegion
    last_stable_offset: int = -1  # -1: the high watermark
    aborted: Sequence[tuple[int, int]] | None = None  # (producer id, first offset); None is null


@dataclass(frozen=True, slots=True)
class TopicAnswer:
    name: str
    topic_id: uuid.UUID | None
    partitions: Sequence[PartitionAnswer]


def encode_fetch_response(version: int, session_id: int, topics: Sequence[TopicAnswer]) -> bytes | Spliced:
    """The Fetch response body of `version` (after the response header): bytes, or Spliced when
    some partition's records are a FileRegion."""
    flexible = version >= FIRST_FLEXIBLE
    pieces: list[Piece] = []  # the joined bytes before each region, and the region
    size = 0
    parts: list[bytes] = [_HEAD_V7.pack(0, 0, session_id) if version >= 7 else _HEAD_V4.pack(0)]
    parts.append(uvarint(len(topics) + 1) if flexible else _I32.pack(len(topics)))
    part_struct = _PART_V5 if version >= 5 else _PART_V4
    tags = _NO_TAGS if flexible else b""
    for topic in topics:
        parts.append(_topic_head(version, flexible, topic))
        for p in topic.partitions:
            records = p.records
            parts.append(_partition_head(version, flexible, part_struct, p))
            if isinstance(records, bytes):
                parts.append(records)
            else:
                head = b"".join(parts)
                pieces += (head, records)
                size += len(head) + records.size
                parts = []
            parts.append(tags)
        parts.append(tags)
    parts.append(tags)
    if not pieces:
        return b"".join(parts)
    tail = b"".join(parts)
    if tail:
        pieces.append(tail)
    return Spliced(pieces, size + len(tail))


def _topic_head(version: int, flexible: bool, topic: TopicAnswer) -> bytes:
    """A topic's id or name, and the count of its partitions."""
    if version >= FIRST_TOPIC_ID:
        name = (topic.topic_id or uuid.UUID(int=0)).bytes
    elif flexible:
        name = compact_string(topic.name)
    else:
        encoded = topic.name.encode()
        name = _I16.pack(len(encoded)) + encoded
    count = len(topic.partitions)
    return name + (uvarint(count + 1) if flexible else _I32.pack(count))


def _partition_head(version: int, flexible: bool, part_struct: struct.Struct, p: PartitionAnswer) -> bytes:
    """A partition's fields up to and including the length of its records."""
    hw = p.high_watermark
    lso = hw if p.last_stable_offset < 0 else p.last_stable_offset
    if version >= 5:
        head = part_struct.pack(p.partition_index, p.error_code, hw, lso, p.log_start_offset)
    else:
        head = part_struct.pack(p.partition_index, p.error_code, hw, lso)
    if flexible:
        aborted = _COMPACT_NULL if p.aborted is None else _aborted(p.aborted, True)
        return head + aborted + _NO_PREFERRED_REPLICA + uvarint(len(p.records) + 1)
    aborted = _NULL_ARRAY if p.aborted is None else _aborted(p.aborted, False)
    preferred = _NO_PREFERRED_REPLICA if version >= 11 else b""
    return head + aborted + preferred + _I32.pack(len(p.records))


def _aborted(entries: Sequence[tuple[int, int]], flexible: bool) -> bytes:
    """The aborted_transactions array: a count, then producer id and first offset of each entry
    (each followed by its empty tagged fields in flexible versions)."""
    if flexible:
        return uvarint(len(entries) + 1) + b"".join(_ABORTED.pack(*e) + _NO_TAGS for e in entries)
    return _I32.pack(len(entries)) + b"".join(_ABORTED.pack(*e) for e in entries)
