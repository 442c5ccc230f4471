"""Message formats v0 and v1 ("message sets"): converted to a v2 batch on append, and v2 batches
down-converted to them for Fetch v0-3, as Kafka's LogValidator and RecordsUtil.downConvert do.

A legacy message is `offset int64, size int32, crc int32 (CRC-32 from magic on), magic int8,
attributes int8, [timestamp int64 (v1)], key bytes, value bytes`. A compressed message (a
"wrapper") holds a whole compressed message set as its value; in magic 1 its inner offsets are
relative and the wrapper carries the last offset. Magic 0 has no timestamp: its records are stored
with timestamp -1 (none), as Kafka stores them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from kafkito.broker.log.batch import HEADER, HEADER_SIZE, iter_headers
from kafkito.broker.log.errors import CorruptMessage, InvalidRecord, InvalidTimestamp, LogError
from kafkito.protocol.errors import ErrorCode
from kafkito.protocol.primitives import crc32c, varint

MAGIC_AT = 16  # the magic byte's position, in a legacy message and in a v2 batch alike
NO_TIMESTAMP = -1
_CODEC_MASK = 0x07
_LOG_APPEND_TIME = 0x08
_GZIP, _SNAPPY, _LZ4, _ZSTD = 1, 2, 3, 4
_LOG_OVERHEAD = 12  # offset + size
_PREFIX = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_TIMESTAMP = struct.Struct(">q")
_LEN = struct.Struct(">i")
_CRC = struct.Struct(">I")
_MIN_SIZE = {0: 14, 1: 22}  # crc + magic + attributes (+ timestamp) + key and value lengths


class UnsupportedCompressionType(LogError):
    CODE = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class Message(NamedTuple):
    """One record of a message set (after decompression)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


def is_legacy(records: bytes | None) -> bool:
    """Whether a produce request's records are a v0/v1 message set (not v2 batches)."""
    return records is not None and len(records) > MAGIC_AT and records[MAGIC_AT] < 2


# -- up-conversion (Produce v0-2) --------------------------------------------------------------


def to_v2(records: bytes) -> bytes:
    """One uncompressed or compressed (with the wrappers' codec) v2 batch holding every message of
    a legacy message set, offsets and producer state unassigned; b"" for an empty set.

    Raises CORRUPT_MESSAGE (framing, CRC), INVALID_RECORD (nested compression), INVALID_TIMESTAMP (a
    producer's LogAppendTime) or UNSUPPORTED_COMPRESSION_TYPE, as Kafka's validation does.
    """
    messages: list[Message] = []
    codec = 0
    for magic, attributes, timestamp, key, value, offset in _messages(records):
        wrapper_codec = attributes & _CODEC_MASK
        if wrapper_codec == 0:
            messages.append(Message(offset, timestamp, key, value))
            continue
        codec = codec or wrapper_codec
        for inner in _messages(_decompress(wrapper_codec, magic, value)):
            if inner[1] & _CODEC_MASK:
                raise InvalidRecord("a compressed message holds another compressed message")
            messages.append(Message(inner[5], inner[2], inner[3], inner[4]))
    if not messages:
        return b""
    return build_v2(messages, codec)


def _messages(buf: bytes) -> Iterator[tuple[int, int, int, bytes | None, bytes | None, int]]:
    """(magic, attributes, timestamp, key, value, offset) of each whole message; a partial message at
    the end is ignored, as Kafka trims it."""
    view = memoryview(buf)
    pos, end = 0, len(buf)
    while end - pos >= _PREFIX.size:
        offset, size, crc, magic, attributes = _PREFIX.unpack_from(view, pos)
        if magic not in (0, 1):
            raise CorruptMessage(f"message at position {pos} has magic {magic} in a v0/v1 message set")
        if size < _MIN_SIZE[magic]:
            raise CorruptMessage(f"message at position {pos} has size {size}, below the minimum")
        stop = pos + _LOG_OVERHEAD + size
        if stop > end:
            return
        if zlib.crc32(view[pos + MAGIC_AT : stop]) != crc:
            raise CorruptMessage(f"CRC mismatch in the message at position {pos}")
        at = pos + MAGIC_AT + 2
        timestamp = NO_TIMESTAMP
        if magic == 1:
            if attributes & _LOG_APPEND_TIME:
                raise InvalidTimestamp("producers may not set the LogAppendTime timestamp type")
            (timestamp,) = _TIMESTAMP.unpack_from(view, at)
            at += 8
        key, at = _bytes(view, at, stop)
        value, at = _bytes(view, at, stop)
        if at != stop:
            raise CorruptMessage(f"message at position {pos} has {stop - at} bytes after its value")
        yield magic, attributes, timestamp, key, value, offset
        pos = stop


def _bytes(view: memoryview, at: int, stop: int) -> tuple[bytes | None, int]:
    if at + 4 > stop:
        raise CorruptMessage("a message's key or value runs past its end")
    (length,) = _LEN.unpack_from(view, at)
    at += 4
    if length < 0:
        return None, at
    if at + length > stop:
        raise CorruptMessage("a message's key or value runs past its end")
    return bytes(view[at : at + length]), at + length


def _decompress(codec: int, magic: int, value: bytes | None) -> bytes:
    import kafka.codec as codecs

    if value is None:
        raise CorruptMessage("a compressed message has no value")
    _check_old_lz4(codec, magic)
    try:
        if codec == _GZIP:
            return bytes(codecs.gzip_decode(value))
        if codec == _SNAPPY:
            return bytes(codecs.snappy_decode(value))
        if codec == _LZ4:
            return bytes(codecs.lz4_decode_old_kafka(value) if magic == 0 else codecs.lz4_decode(value))
    except Exception as exc:  # each codec library raises its own errors for bad input
        raise CorruptMessage(f"cannot decompress a message: {exc.__class__.__name__}") from None
    raise UnsupportedCompressionType(f"compression codec {codec} needs message format v2")


def _check_old_lz4(codec: int, magic: int) -> None:
    """Magic 0's LZ4 framing (Kafka 0.8's wrong header checksum) needs the xxhash package."""
    import kafka.codec as codecs

    if codec == _LZ4 and magic == 0 and getattr(codecs, "xxhash", None) is None:
        raise UnsupportedCompressionType("LZ4 in message format v0 needs the xxhash package")


def _compress(codec: int, data: bytes, magic: int) -> bytes:
    import kafka.codec as codecs

    if codec == _GZIP:
        return bytes(codecs.gzip_encode(data))
    if codec == _SNAPPY:
        return bytes(codecs.snappy_encode(data))
    if codec == _LZ4:
        _check_old_lz4(codec, magic)
        if magic == 0:
            return bytes(codecs.lz4_encode_old_kafka(data))
        return bytes(codecs.lz4_encode(data))
    if codec == _ZSTD and magic == 2:
        return bytes(codecs.zstd_encode(data))
    raise UnsupportedCompressionType(f"compression codec {codec} is not supported in magic {magic}")


def build_v2(messages: list[Message], codec: int = 0) -> bytes:
    """A v2 batch of `messages` (consecutive offset deltas), no producer id, leader epoch -1."""
    base_ts = messages[0].timestamp
    max_ts = max(m.timestamp for m in messages)
    body = bytearray()
    for i, m in enumerate(messages):
        record = bytearray(b"\x00")  # attributes
        record += varint(m.timestamp - base_ts)
        record += varint(i)  # offset delta: offsets are assigned on append
        for field in (m.key, m.value):
            if field is None:
                record += varint(-1)
            else:
                record += varint(len(field))
                record += field
        record += b"\x00"  # no headers
        body += varint(len(record))
        body += record
    payload = _compress(codec, bytes(body), 2) if codec else bytes(body)
    count = len(messages)
    head = bytearray(HEADER_SIZE)
    HEADER.pack_into(
        head, 0, 0, HEADER_SIZE - _LOG_OVERHEAD + len(payload), -1, 2, 0, codec, count - 1,
        base_ts, max_ts, -1, -1, -1, count,
    )  # fmt: skip
    batch = head + payload
    _CRC.pack_into(batch, 17, crc32c(memoryview(batch)[21:]))
    return bytes(batch)


# -- down-conversion (Fetch v0-3) --------------------------------------------------------------


def down_convert(records: bytes, magic: int, fetch_offset: int) -> bytes:
    """v2 batches as a magic-`magic` message set, as Kafka's down-conversion writes it: control
    batches dropped, headers dropped, a compressed batch as one wrapper of the same codec, and in an
    uncompressed batch the records before `fetch_offset` left out.

    Raises UNSUPPORTED_COMPRESSION_TYPE for a zstd batch (v0/v1 have no zstd).
    """
    from kafka.record.default_records import DefaultRecordBatch

    out = bytearray()
    view = memoryview(records)
    for pos, header in iter_headers(view):
        if header.is_control:
            continue
        codec = header.compression
        if codec == _ZSTD:
            raise UnsupportedCompressionType("zstd-compressed batches cannot be down-converted")
        append_time = header.max_timestamp if header.is_log_append_time else None
        batch = DefaultRecordBatch(bytes(view[pos : pos + header.size]))
        kept = [
            Message(r.offset, r.timestamp, r.key, r.value) for r in batch if codec or r.offset >= fetch_offset
        ]
        if not kept:
            continue
        if codec:
            out += _wrapper(kept, magic, codec, append_time)
        else:
            for m in kept:
                ts = _timestamp(m, append_time)
                out += _legacy_message(m.offset, magic, 0, ts, m.key, m.value, append_time)
    return bytes(out)


def _timestamp(m: Message, append_time: int | None) -> int:
    return m.timestamp if append_time is None else append_time


def _wrapper(messages: list[Message], magic: int, codec: int, append_time: int | None) -> bytes:
    base = messages[0].offset
    inner = bytearray()
    for m in messages:
        offset = m.offset - base if magic == 1 else m.offset
        inner += _legacy_message(offset, magic, 0, _timestamp(m, append_time), m.key, m.value, append_time)
    wrapper_ts = append_time if append_time is not None else max(m.timestamp for m in messages)
    value = _compress(codec, bytes(inner), magic)
    return _legacy_message(messages[-1].offset, magic, codec, wrapper_ts, None, value, append_time)


def _legacy_message(
    offset: int,
    magic: int,
    codec: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    append_time: int | None,
) -> bytes:
    attributes = codec | (_LOG_APPEND_TIME if magic == 1 and append_time is not None else 0)
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == 1:
        body += _TIMESTAMP.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += _LEN.pack(-1)
        else:
            body += _LEN.pack(len(field))
            body += field
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, len(body) + 4, crc) + bytes(body)
