"""The magic-v2 record batch header: parse, validate and patch it in place without touching the records."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafkito.broker.log.errors import CorruptMessage, InvalidRecord, MessageTooLarge, UnreadableRecords
from kafkito.protocol.primitives import crc32c

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes batchLength does not count
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

PARTITION_LEADER_EPOCH_AT = 12
MAGIC_AT = 16
CRC_AT = 17
ATTRIBUTES_AT = 21  # the CRC covers everything from here to the end of the batch
LAST_OFFSET_DELTA_AT = 23
MAX_TIMESTAMP_AT = 35

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20

MAX_CODEC_ID = 4  # zstd; the mask leaves room for 5-7, which no Kafka knows
NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1

_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")


class BatchHeader(NamedTuple):
    """The 61-byte header of one record batch, as stored."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """The sequence of the batch's last record; sequences wrap from INT32_MAX to 0."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)


def parse_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Unpack the header at `pos`; the caller guarantees HEADER_SIZE bytes are there."""
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def batch_crc(buf: bytes | bytearray | memoryview, pos: int, size: int) -> int:
    """CRC32C over attributes..end of the batch at `pos`, as stored in its crc field."""
    return crc32c(memoryview(buf)[pos + ATTRIBUTES_AT : pos + size])


def split_batches(
    buf: bytes | bytearray | memoryview, *, max_batch_bytes: int | None = None
) -> list[tuple[int, BatchHeader]]:
    """Validate every batch of a produce request's records; return (position, header) of each.

    Raises CORRUPT_MESSAGE for framing or CRC problems, INVALID_RECORD for batches a v3+ producer
    cannot legally send, MESSAGE_TOO_LARGE for a batch above `max_batch_bytes`, UNKNOWN_SERVER_ERROR
    for a codec id no Kafka knows (5-7). The checks come in Kafka's order.
    """
    view = memoryview(buf)
    end = len(view)
    out: list[tuple[int, BatchHeader]] = []
    pos = 0
    while pos < end:
        if end - pos < HEADER_SIZE:
            raise CorruptMessage(f"{end - pos} trailing bytes at position {pos} are less than a batch header")
        header = parse_header(view, pos)
        if header.batch_length < MIN_BATCH_LENGTH:
            raise CorruptMessage(f"batch length {header.batch_length} at position {pos} is below the minimum")
        size = header.size
        if pos + size > end:
            raise CorruptMessage(f"batch at position {pos} claims {size} bytes, only {end - pos} present")
        if header.magic != 2:
            raise InvalidRecord(f"produce requests must carry magic v2 batches, got magic {header.magic}")
        if header.base_offset != 0:
            raise InvalidRecord(f"batch at position {pos} has base offset {header.base_offset}, not 0")
        if max_batch_bytes is not None and size > max_batch_bytes:
            raise MessageTooLarge(f"batch of {size} bytes exceeds max.message.bytes {max_batch_bytes}")
        if batch_crc(view, pos, size) != header.crc:
            raise CorruptMessage(f"CRC mismatch in batch at position {pos}")
        if header.compression > MAX_CODEC_ID:
            raise UnreadableRecords(f"batch at position {pos} has unknown codec id {header.compression}")
        _check_counts(header, pos)
        out.append((pos, header))
        pos += size
    return out


def _check_counts(header: BatchHeader, pos: int) -> None:
    """What Kafka checks of a client's batch before its records: the count matches the offset range,
    and an idempotent batch has a sequence (a marker
    the broker writes has none)."""
    if header.record_count <= 0 or header.last_offset_delta != header.record_count - 1:
        raise InvalidRecord(
            f"batch at position {pos} has {header.record_count} records but last offset delta "
            f"{header.last_offset_delta}"
        )
    if header.has_producer_id and header.base_sequence < 0 and not header.is_control:
        raise InvalidRecord(
            f"batch at position {pos} of producer {header.producer_id} has sequence {header.base_sequence}"
        )


def iter_headers(buf: bytes | bytearray | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """Walk the complete batches of a buffer known to be valid (e.g. read back from a segment)."""
    view = memoryview(buf)
    pos = 0
    end = len(view)
    while end - pos >= HEADER_SIZE:
        header = parse_header(view, pos)
        if header.batch_length < MIN_BATCH_LENGTH or pos + header.size > end:
            return
        yield pos, header
        pos += header.size


def set_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Assign the batch's offsets; baseOffset is outside the CRC, so no CRC work."""
    _I64.pack_into(buf, pos, base_offset)


def set_partition_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Stamp the leader epoch, which the CRC deliberately does not cover."""
    _I32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_AT, epoch)


def set_log_append_time(buf: bytearray | memoryview, pos: int, size: int, timestamp_ms: int) -> None:
    """Turn a batch into a LogAppendTime batch at `timestamp_ms`; the CRC covers both fields."""
    (attributes,) = _I16.unpack_from(buf, pos + ATTRIBUTES_AT)
    _I16.pack_into(buf, pos + ATTRIBUTES_AT, attributes | TIMESTAMP_TYPE_MASK)
    _I64.pack_into(buf, pos + MAX_TIMESTAMP_AT, timestamp_ms)
    _U32.pack_into(buf, pos + CRC_AT, batch_crc(buf, pos, size))
