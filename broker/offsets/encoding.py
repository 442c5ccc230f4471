"""The primitives `__consumer_offsets` keys and values are made of, in Kafka's two encodings.

Classic fields (every key, offset and group values up to v3) have int16 string lengths and int32
byte and array lengths. Flexible ones (offset and group values v4, every consumer-group value) have
compact lengths (unsigned varint of length + 1, 0 for null) and end each struct with a tagged-field
section: a count, then per field its tag, its size and its bytes, in ascending tag order.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence

from kafkito.protocol.primitives import WireFormatError, read_uvarint, uvarint

I8 = struct.Struct(">b")
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
_MAX_STRING = 0x7FFF
NO_TAGGED_FIELDS = b"\x00"


class RecordFormatError(ValueError):
    """Bytes that are not a valid key or value of the version they announce."""


# -- writing ------------------------------------------------------------------------------------


def _utf8(text: str) -> bytes:
    raw = text.encode()
    if len(raw) > _MAX_STRING:
        raise RecordFormatError(f"string of {len(raw)} bytes does not fit an int16 length")
    return raw


def string(text: str) -> bytes:
    """A classic string: int16 length, UTF-8 bytes."""
    raw = _utf8(text)
    return I16.pack(len(raw)) + raw


def nullable_string(text: str | None) -> bytes:
    return b"\xff\xff" if text is None else string(text)


def bytes_field(data: bytes) -> bytes:
    """Classic bytes: int32 length."""
    return I32.pack(len(data)) + data


def compact_string(text: str | None) -> bytes:
    """A compact (nullable) string: uvarint length + 1, 0 for null."""
    if text is None:
        return b"\x00"
    raw = _utf8(text)
    return uvarint(len(raw) + 1) + raw


def compact_bytes(data: bytes) -> bytes:
    return uvarint(len(data) + 1) + data


def compact_strings(items: Sequence[str]) -> bytes:
    """A compact array of strings."""
    return uvarint(len(items) + 1) + b"".join(compact_string(s) for s in items)


def compact_int32s(items: Sequence[int]) -> bytes:
    return uvarint(len(items) + 1) + struct.pack(f">{len(items)}i", *items)


def tagged_section(fields: Sequence[tuple[int, bytes]]) -> bytes:
    """A tagged-field section of `(tag, encoded field)` pairs, written in ascending tag order."""
    out = bytearray(uvarint(len(fields)))
    for tag, data in sorted(fields, key=lambda f: f[0]):
        out += uvarint(tag)
        out += uvarint(len(data))
        out += data
    return bytes(out)


# -- reading ------------------------------------------------------------------------------------


class Reader:
    """A cursor over one key or value (from just after its int16 version by default); `flexible`
    switches to compact lengths and tagged sections."""

    __slots__ = ("buf", "flexible", "pos")

    def __init__(self, buf: bytes, pos: int = 2, flexible: bool = False) -> None:
        self.buf = buf
        self.pos = pos
        self.flexible = flexible

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise RecordFormatError(f"need {n} bytes at {self.pos}, have {len(self.buf) - self.pos}")
        out = self.buf[self.pos : end]
        self.pos = end
        return out

    def i8(self) -> int:
        return int(I8.unpack(self.take(1))[0])

    def i16(self) -> int:
        return int(I16.unpack(self.take(2))[0])

    def i32(self) -> int:
        return int(I32.unpack(self.take(4))[0])

    def i64(self) -> int:
        return int(I64.unpack(self.take(8))[0])

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(self.take(16)))

    def uvarint(self) -> int:
        try:
            value, self.pos = read_uvarint(self.buf, self.pos)
        except WireFormatError as exc:
            raise RecordFormatError(str(exc)) from None
        return value

    def _length(self, wide: bool) -> int:
        if self.flexible:
            return self.uvarint() - 1
        if wide:
            return self.i32()
        return self.i16()

    def nullable_string(self) -> str | None:
        n = self._length(False)
        if n < 0:
            return None
        try:
            return self.take(n).decode()
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"invalid UTF-8 string: {exc}") from None

    def string(self) -> str:
        s = self.nullable_string()
        if s is None:
            raise RecordFormatError("null where a string is required")
        return s

    def bytes_(self) -> bytes:
        n = self._length(True)
        return b"" if n < 0 else self.take(n)

    def array_length(self) -> int:
        """A non-nullable array's element count (each element takes at least a byte)."""
        n = self._length(True)
        if n < 0 or n > len(self.buf) - self.pos:
            raise RecordFormatError(f"bad array length {n}")
        return n

    def strings(self) -> tuple[str, ...]:
        return tuple(self.string() for _ in range(self.array_length()))

    def int32s(self) -> tuple[int, ...]:
        n = self.array_length()
        return struct.unpack(f">{n}i", self.take(4 * n))

    def tagged_fields(self) -> None:
        """Skip a tagged section (flexible encodings only)."""
        if self.flexible:
            self.tagged()

    def tagged(self) -> dict[int, bytes]:
        """The tagged section's fields, by tag; the caller decodes the tags it knows."""
        fields: dict[int, bytes] = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            fields[tag] = self.take(self.uvarint())
        return fields

    def end(self, what: str) -> None:
        if self.pos != len(self.buf):
            raise RecordFormatError(f"{len(self.buf) - self.pos} trailing bytes after {what}")


def version_of(buf: bytes) -> int:
    """The int16 version (a key's record type) every key and value starts with."""
    if len(buf) < 2:
        raise RecordFormatError("shorter than a version")
    (v,) = I16.unpack_from(buf, 0)
    return int(v)
