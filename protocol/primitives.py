"""Kafka's wire primitives, in one place: varints, compact strings, tagged fields and CRC-32C.

- Unsigned varints: the lengths and tagged-field sections of flexible versions (at most 5 bytes and
  32 bits, as Kafka reads them).
- Signed zigzag varints and varlongs: the fields of a magic-v2 record.
- Strings: an int16 length (negative: null), or in flexible versions a compact string: an unsigned
  varint of length + 1 (0 is null); then UTF-8 bytes.
- Tagged-field sections: a count, then (tag, size, bytes) for each field.
- Kafka 4.4's limits on declared counts, checked before anything is read or allocated: an array
  of more elements, or a tagged-field section of more fields, than bytes remain in the request, or
  an array of over 1,000,000 elements, or a section of over 10,000 fields (`MessageUtil` in
  kafka-clients 4.4). Kafka fails the request's parsing and closes the connection.
- CRC-32C (Castagnoli) of record batches, through the `crc32c` package loaded on first use (its
  `__init__` pulls in `importlib.metadata`, ~20 ms that would land on every broker start).

kafka-python has the same helpers (`kafka.record.util`, `kafka.protocol`'s codecs), but importing
`kafka.record.util` runs `kafka.record`'s `__init__`, which loads every record format (~20-35 ms at
start-up), and its protocol codecs read from a stream rather than at a position. `bench/wire.py`
compares each function here with its kafka-python counterpart; BENCHMARKS.md has the figures.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

Buffer = bytes | bytearray | memoryview

_INT16 = struct.Struct(">h")
_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))


class WireFormatError(ValueError):
    """Bytes that do not follow the wire format: a cut value, an over-long varint, invalid UTF-8."""


# -- Kafka's limits on declared counts ----------------------------------------------------------------

MAX_ARRAY_LENGTH = 1_000_000
MAX_TAGGED_FIELD_COUNT = 10_000


def array_length_refused(count: int, remaining: int) -> WireFormatError | None:
    """Why Kafka refuses an array declaring `count` elements with `remaining` bytes after its length
    (every element takes at least one byte), or None; checked in Kafka's order."""
    if count > remaining:
        return WireFormatError(f"array of {count} elements declared with {remaining} bytes left")
    if count > MAX_ARRAY_LENGTH:
        return WireFormatError(f"array of {count} elements, above the limit of {MAX_ARRAY_LENGTH}")
    return None


def tagged_field_count_refused(count: int, remaining: int) -> WireFormatError | None:
    """Why Kafka refuses a tagged-field section declaring `count` fields with `remaining` bytes after
    its count, or None; checked in Kafka's order."""
    if count > remaining:
        return WireFormatError(f"{count} tagged fields declared with {remaining} bytes left")
    if count > MAX_TAGGED_FIELD_COUNT:
        return WireFormatError(f"{count} tagged fields, above the limit of {MAX_TAGGED_FIELD_COUNT}")
    return None


# -- unsigned varints (flexible versions) ------------------------------------------------------------


def read_uvarint(buf: Buffer, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it; at most 5 bytes and 32 bits."""
    shift = 0
    value = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise WireFormatError("truncated unsigned varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            if value > 0xFFFFFFFF:
                raise WireFormatError("unsigned varint over 32 bits")
            return value, pos
        shift += 7
        if shift > 28:
            raise WireFormatError("unsigned varint longer than 5 bytes")


def read_compact_array_length(buf: Buffer, pos: int) -> tuple[int, int]:
    """The element count of the compact array at `pos` (-1: null) and the position after its length;
    a count Kafka refuses (`array_length_refused`) raises WireFormatError."""
    size, pos = read_uvarint(buf, pos)
    if size > MAX_ARRAY_LENGTH or size > len(buf) - pos:  # size is the count + 1
        refused = array_length_refused(size - 1, len(buf) - pos)
        if refused is not None:
            raise refused
    return size - 1, pos


def uvarint(value: int) -> bytes:
    """The unsigned varint of a non-negative int."""
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# -- signed zigzag varints and varlongs (record format) ----------------------------------------------


def read_varint(buf: Buffer, pos: int) -> tuple[int, int]:
    """The zigzag varint (or varlong: up to 64 bits) at `pos` and the position after it."""
    try:
        b = buf[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
        shift = 0
        z = 0
        while True:
            b = buf[pos]
            pos += 1
            z |= (b & 0x7F) << shift
            if b < 0x80:
                return (z >> 1) ^ -(z & 1), pos
            shift += 7
            if shift > 63:
                raise WireFormatError("varlong longer than 10 bytes")
    except IndexError:
        raise WireFormatError("truncated varint") from None


def varint(value: int) -> bytes:
    """The zigzag varint (or varlong) of a signed 64-bit int."""
    z = (value << 1) ^ (value >> 63)
    if z < 0x80:
        return _ONE_BYTE[z]
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


# -- strings ------------------------------------------------------------------------------------------


def read_string(buf: bytes | bytearray, pos: int) -> tuple[str | None, int]:
    """The classic (int16 length, negative for null) string at `pos` and the position after it."""
    try:
        (size,) = _INT16.unpack_from(buf, pos)
    except struct.error:
        raise WireFormatError("truncated string length") from None
    pos += 2
    if size < 0:
        return None, pos
    end = pos + size
    if end > len(buf):
        raise WireFormatError(f"string of {size} bytes runs past the end of the buffer")
    try:
        return buf[pos:end].decode(), end
    except UnicodeDecodeError as exc:
        raise WireFormatError(f"string is not UTF-8: {exc}") from None


# -- compact strings ----------------------------------------------------------------------------------


def read_compact_string(buf: bytes | bytearray, pos: int) -> tuple[str | None, int]:
    """The compact (nullable) string at `pos` and the position after it.

    Unlike kafka-python (and like Kafka), a string that runs past the end of the buffer is an error,
    not a silently shortened string.
    """
    try:
        size = buf[pos]  # lengths under 127 take one byte: read inline
    except IndexError:
        raise WireFormatError("truncated compact string") from None
    if size < 0x80:
        pos += 1
    else:
        size, pos = read_uvarint(buf, pos)
    if not size:
        return None, pos
    end = pos + size - 1
    if end > len(buf):
        raise WireFormatError(f"compact string of {size - 1} bytes runs past the end of the buffer")
    try:
        return buf[pos:end].decode(), end
    except UnicodeDecodeError as exc:
        raise WireFormatError(f"compact string is not UTF-8: {exc}") from None


def compact_string(text: str | None) -> bytes:
    """A compact nullable string."""
    if text is None:
        return b"\x00"
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


# -- tagged fields ------------------------------------------------------------------------------------


def skip_tagged_fields(buf: Buffer, pos: int) -> int:
    """Skip a tagged-field section whose fields we do not read, checking its bounds and Kafka's limits;
    returns its end."""
    count, pos = read_uvarint(buf, pos)
    if count and (refused := tagged_field_count_refused(count, len(buf) - pos)) is not None:
        raise refused
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
        if pos > len(buf):
            raise WireFormatError("tagged field runs past the end of the buffer")
    return pos


# -- CRC-32C ------------------------------------------------------------------------------------------

_crc32c: Callable[[Buffer], int] | None = None


def crc32c(data: Buffer) -> int:
    """CRC-32C (Castagnoli) of `data`, as a record batch's crc field holds it."""
    global _crc32c
    if _crc32c is None:
        from crc32c import crc32c as impl

        _crc32c = impl
    return _crc32c(data)
