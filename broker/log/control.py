"""Transaction end markers: the COMMIT/ABORT control batch Kafka writes, built and read back by hand.

A marker is one magic-v2 batch, uncompressed and CreateTime, whose attributes say transactional and
control, carrying the producer id and epoch, no sequence (-1) and one record. The record's key is
int16 version 0 and int16 type (0 = ABORT, 1 = COMMIT, Kafka's ControlRecordType); its value is
int16 version 0 and int32 coordinator epoch (Kafka's EndTransactionMarker), and it has no headers.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkito.broker.log.batch import (
    CONTROL_MASK,
    CRC_AT,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    TRANSACTIONAL_MASK,
    BatchHeader,
    batch_crc,
)
from kafkito.broker.log.errors import CorruptMessage
from kafkito.protocol.primitives import WireFormatError, read_varint

ABORT = 0
COMMIT = 1
CONTROL_VERSION = 0
MARKER_ATTRIBUTES = TRANSACTIONAL_MASK | CONTROL_MASK

_KEY = struct.Struct(">hh")  # version, type
_VALUE = struct.Struct(">hi")  # version, coordinator epoch
_U32 = struct.Struct(">I")
# length 16, attributes 0, timestamp delta 0, offset delta 0, key length 4 (zigzag varints, one byte each)
_RECORD_HEAD = bytes([16 << 1, 0, 0, 0, 4 << 1])
_VALUE_LENGTH = bytes([6 << 1])
_NO_HEADERS = b"\x00"
_RECORD_SIZE = len(_RECORD_HEAD) + _KEY.size + len(_VALUE_LENGTH) + _VALUE.size + len(_NO_HEADERS)
MARKER_BATCH_SIZE = HEADER_SIZE + _RECORD_SIZE


class Marker(NamedTuple):
    """What a control record says: COMMIT or ABORT, and the coordinator epoch that wrote it."""

    commit: bool
    coordinator_epoch: int


def marker_batch(
    producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, timestamp_ms: int
) -> bytearray:
    """An end-transaction control batch at base offset 0, CRC set (the log assigns its offset)."""
    buf = bytearray(MARKER_BATCH_SIZE)
    HEADER.pack_into(
        buf,
        0,
        0,  # base offset
        MARKER_BATCH_SIZE - LOG_OVERHEAD,
        -1,  # partition leader epoch, stamped on append
        2,
        0,  # crc, below
        MARKER_ATTRIBUTES,
        0,  # last offset delta
        timestamp_ms,
        timestamp_ms,
        producer_id,
        producer_epoch,
        NO_SEQUENCE,
        1,
    )
    record = (
        _RECORD_HEAD
        + _KEY.pack(CONTROL_VERSION, COMMIT if commit else ABORT)
        + _VALUE_LENGTH
        + _VALUE.pack(CONTROL_VERSION, coordinator_epoch)
        + _NO_HEADERS
    )
    buf[HEADER_SIZE:] = record
    _U32.pack_into(buf, CRC_AT, batch_crc(buf, 0, MARKER_BATCH_SIZE))
    return buf


def read_marker(batch: bytes | bytearray | memoryview, header: BatchHeader) -> Marker | None:
    """The marker in a stored control batch, or None when its record is not an end-transaction marker.

    Control batches are written uncompressed by every Kafka version; another control type (Kafka's
    LEADER_CHANGE and snapshot records live only in KRaft's own log) is not a transaction's end.
    """
    if header.compression:
        raise CorruptMessage("compressed control batch")
    try:
        pos = HEADER_SIZE
        _, pos = read_varint(batch, pos)  # record length
        pos += 1  # attributes
        _, pos = read_varint(batch, pos)  # timestamp delta
        _, pos = read_varint(batch, pos)  # offset delta
        key_length, pos = read_varint(batch, pos)
        if key_length < _KEY.size:
            return None
        _, kind = _KEY.unpack_from(batch, pos)
        pos += key_length
        value_length, pos = read_varint(batch, pos)
        if kind not in (ABORT, COMMIT):
            return None
        if value_length < _VALUE.size:
            raise CorruptMessage(f"end transaction marker value of {value_length} bytes")
        _, coordinator_epoch = _VALUE.unpack_from(batch, pos)
    except (struct.error, WireFormatError, IndexError) as e:
        raise CorruptMessage(f"unreadable control record: {e}") from e
    return Marker(kind == COMMIT, coordinator_epoch)
