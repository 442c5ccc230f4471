"""Magic-v2 record batches of `__consumer_offsets`: a fast uncompressed builder and a record reader."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from kafkito.broker.log.batch import (
    ATTRIBUTES_AT,
    COMPRESSION_MASK,
    HEADER,
    HEADER_SIZE,
    TRANSACTIONAL_MASK,
    BatchHeader,
    iter_headers,
)
from kafkito.protocol.primitives import crc32c, read_varint, varint

_CRC = struct.Struct(">I")
_CRC_AT = 17
NO_PRODUCER_ID = -1
NO_PARTITION_LEADER_EPOCH = -1


class Record(NamedTuple):
    """One record of a stored batch; `value` None is a tombstone."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


def build_batch(
    records: Sequence[tuple[bytes, bytes | None]],
    timestamp_ms: int,
    producer: tuple[int, int, int] | None = None,
) -> bytearray:
    """An uncompressed CreateTime batch of `(key, value)` records, all stamped `timestamp_ms`.

    No producer id, epoch or sequence, as Kafka's coordinator writes them, unless `producer`
    (id, epoch, base sequence) is given: then it is that producer's transactional batch (a
    TxnOffsetCommit). The log assigns the base offset and partition leader epoch on append.
    """
    body = bytearray()
    for delta, (key, value) in enumerate(records):
        # attributes 0, timestamp delta 0, offset delta, key, value, no headers
        rec = b"\x00\x00" + varint(delta) + varint(len(key)) + key
        rec += b"\x01" if value is None else varint(len(value)) + value
        rec += b"\x00"
        body += varint(len(rec))
        body += rec
    count = len(records)
    buf = bytearray(HEADER_SIZE)
    HEADER.pack_into(
        buf,
        0,
        0,  # base offset
        HEADER_SIZE - 12 + len(body),
        NO_PARTITION_LEADER_EPOCH,
        2,  # magic
        0,  # crc, below
        0 if producer is None else TRANSACTIONAL_MASK,  # no compression, CreateTime, not control
        count - 1,
        timestamp_ms,
        timestamp_ms,
        NO_PRODUCER_ID if producer is None else producer[0],
        -1 if producer is None else producer[1],
        -1 if producer is None else producer[2],
        count,
    )
    buf += body
    _CRC.pack_into(buf, _CRC_AT, crc32c(memoryview(buf)[ATTRIBUTES_AT:]))
    return buf


def _uncompressed_records(batch: bytes, header: BatchHeader) -> Iterator[Record]:
    pos = HEADER_SIZE
    base_offset = header.base_offset
    base_ts = header.base_timestamp
    for _ in range(header.record_count):
        length, pos = read_varint(batch, pos)
        end = pos + length
        pos += 1  # attributes
        ts_delta, pos = read_varint(batch, pos)
        offset_delta, pos = read_varint(batch, pos)
        key_len, pos = read_varint(batch, pos)
        key = None
        if key_len >= 0:
            key = batch[pos : pos + key_len]
            pos += key_len
        value_len, pos = read_varint(batch, pos)
        value = None
        if value_len >= 0:
            value = batch[pos : pos + value_len]
        yield Record(base_offset + offset_delta, base_ts + ts_delta, key, value)
        pos = end


def batch_records(batch: bytes, header: BatchHeader) -> Iterator[Record]:
    """The records of one stored data batch (compressed ones through kafka.record)."""
    if header.attributes & COMPRESSION_MASK == 0:
        yield from _uncompressed_records(batch, header)
        return
    from kafka.record.default_records import DefaultRecordBatch

    for r in DefaultRecordBatch(batch):
        key = None if r.key is None else bytes(r.key)
        value = None if r.value is None else bytes(r.value)
        yield Record(r.offset, r.timestamp, key, value)


def iter_batches(buf: bytes) -> Iterator[tuple[BatchHeader, bytes]]:
    """Each complete batch in `buf` (a log read), with its bytes."""
    for pos, header in iter_headers(buf):
        yield header, buf[pos : pos + header.size]
