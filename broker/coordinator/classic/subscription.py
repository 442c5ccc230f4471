"""Reads the topics out of a `consumer` protocol subscription (the v0 prefix every version shares)."""

from __future__ import annotations

import struct

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def subscribed_topics(metadata: bytes) -> set[str] | None:
    """The subscribed topic names, or None when the bytes do not parse as a subscription."""
    try:
        (version,) = _I16.unpack_from(metadata, 0)
        if version < 0:
            return None
        (count,) = _I32.unpack_from(metadata, 2)
        if count < 0:
            return None
        pos = 6
        topics: set[str] = set()
        for _ in range(count):
            (length,) = _I16.unpack_from(metadata, pos)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(bytes(metadata[pos : pos + length]).decode("utf-8"))
            pos += length
        return topics
    except (struct.error, UnicodeDecodeError):
        return None
