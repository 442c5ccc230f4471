"""The `consumer` embedded protocol a classic member speaks inside a consumer group: its
subscription (JoinGroup metadata, versions 0-3) read, and its assignment (SyncGroup) written."""

from __future__ import annotations

import struct
from typing import NamedTuple

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class Subscription(NamedTuple):
    topics: tuple[str, ...]
    owned: tuple[tuple[str, tuple[int, ...]], ...]  # v1+: partitions the member still owns
    rack_id: str | None  # v3+


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def i16(self) -> int:
        (value,) = _I16.unpack_from(self.data, self.pos)
        self.pos += 2
        return int(value)

    def i32(self) -> int:
        (value,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(value)

    def string(self) -> str | None:
        length = self.i16()
        if length < 0:
            return None
        if self.pos + length > len(self.data):
            raise ValueError("string past the end")
        value = self.data[self.pos : self.pos + length].decode("utf-8")
        self.pos += length
        return value

    def skip_bytes(self) -> None:
        length = self.i32()
        if length > 0:
            self.pos += length

    def count(self) -> int:
        n = self.i32()
        if n < 0 or n > len(self.data):
            raise ValueError("bad array length")
        return n

    def done(self) -> bool:
        return self.pos >= len(self.data)


def decode_subscription(metadata: bytes) -> Subscription | None:
    """The subscription in a JoinGroup protocol's metadata, or None when it does not parse."""
    try:
        r = _Reader(bytes(metadata))
        version = r.i16()
        if version < 0:
            return None
        topics = tuple(t for t in (r.string() for _ in range(r.count())) if t is not None)
        r.skip_bytes()  # user data
        owned: list[tuple[str, tuple[int, ...]]] = []
        if version >= 1 and not r.done():
            for _ in range(r.count()):
                topic = r.string() or ""
                owned.append((topic, tuple(r.i32() for _ in range(r.count()))))
        if version >= 2 and not r.done():
            r.i32()  # generation
        rack = r.string() if version >= 3 and not r.done() else None
        return Subscription(topics, tuple(owned), rack)
    except (struct.error, UnicodeDecodeError, ValueError):
        return None


def encode_assignment(partitions: dict[str, tuple[int, ...]]) -> bytes:
    """A ConsumerProtocolAssignment v0 (every client reads it) without user data."""
    out = [_I16.pack(0), _I32.pack(len(partitions))]
    for topic in sorted(partitions):
        raw = topic.encode()
        parts = sorted(partitions[topic])
        out.append(_I16.pack(len(raw)) + raw + _I32.pack(len(parts)))
        out.extend(_I32.pack(p) for p in parts)
    out.append(_I32.pack(-1))
    return b"".join(out)


def decode_assignment(raw: bytes) -> dict[str, tuple[int, ...]] | None:
    """The partitions of a ConsumerProtocolAssignment (any version), or None when it does not parse."""
    try:
        r = _Reader(bytes(raw))
        if r.i16() < 0:
            return None
        out: dict[str, tuple[int, ...]] = {}
        for _ in range(r.count()):
            topic = r.string() or ""
            out[topic] = tuple(r.i32() for _ in range(r.count()))
        return out
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
