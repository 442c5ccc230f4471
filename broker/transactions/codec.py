"""Kafka's `__transaction_state` record formats: TransactionLogKey v0 and TransactionLogValue v0/v1.

- Key v0: int16 version (0), then the transactional id as a classic string.
- Value v0: int16 version, producer id (int64), epoch (int16), timeout (int32), state (int8),
  partitions (nullable array of topic + int32 partition ids; null for Empty), last update and
  start timestamps (int64).
- Value v1 is the flexible encoding of the same fields (compact strings and arrays, a tagged section
  per struct) plus three tagged fields: previous producer id (tag 0), next producer id (tag 1) and
  the client's transaction version (tag 2), written only when they differ from their defaults.
- A tombstone is the key with a null value.

`value_version` picks v0 unless a v1-only field carries information; the broker's sink asks for
v1 at least (`min_version`) once `transaction.version` is 1 or more, as Kafka writes every value
flexible from then on. Kafka's writer fills only the client's transaction version of the three tags
(its reader reads all three); kafkito also writes the next and previous producer ids when set, so a
V2 transaction that ran out of epochs completes on the right producer id after a restart.
Timestamps are encoded as given: the shell converts between the coordinator's clock and wall-clock
time, as it does for `__consumer_offsets`. The partition of an id is the one Kafka picks.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.offsets.partitioner import partition_for as _partition_for
from kafkito.broker.transactions.metadata import (
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionRecord,
    TransactionTombstone,
    TxnLogRecord,
)
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.primitives import (
    WireFormatError,
    compact_string,
    read_compact_string,
    read_string,
    read_uvarint,
    skip_tagged_fields,
    uvarint,
)

TRANSACTION_STATE_TOPIC = "__transaction_state"
KEY_VERSION = 0
VALUE_VERSIONS = (0, 1)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_HEAD = struct.Struct(">hqhib")  # version, producer id, epoch, timeout, state
_TIMES = struct.Struct(">qq")  # last update, start

_TAG_PREVIOUS_PRODUCER_ID = 0
_TAG_NEXT_PRODUCER_ID = 1
_TAG_CLIENT_TXN_VERSION = 2


class RecordFormatError(ValueError):
    """Bytes that are not a valid transaction log key or value."""


def partition_for(transactional_id: str, num_partitions: int) -> int:
    """The `__transaction_state` partition of an id: Java's `String.hashCode`, as Kafka computes it."""
    return _partition_for(transactional_id, num_partitions)


# -- keys ---------------------------------------------------------------------------------------------


def encode_key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return _I16.pack(KEY_VERSION) + _I16.pack(len(raw)) + raw


def decode_key(data: bytes) -> str | None:
    """The transactional id of a key; None for a key of another record type (skipped, as Kafka does)."""
    try:
        (version,) = _I16.unpack_from(data, 0)
        if version != KEY_VERSION:
            return None
        text, _ = read_string(data, 2)
    except (struct.error, WireFormatError) as exc:
        raise RecordFormatError(f"bad transaction log key: {exc}") from None
    if text is None:
        raise RecordFormatError("transaction log key has a null transactional id")
    return text


# -- values -------------------------------------------------------------------------------------------


def value_version(meta: TransactionMetadata) -> int:
    needs_v1 = (
        meta.previous_producer_id != NO_PRODUCER_ID
        or meta.next_producer_id != NO_PRODUCER_ID
        or meta.client_transaction_version != 0
    )
    return 1 if needs_v1 else 0


def _by_topic(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    topics: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        topics[tp.topic].append(tp.partition)
    return [(topic, sorted(ids)) for topic, ids in sorted(topics.items())]


def encode_value(meta: TransactionMetadata, version: int | None = None) -> bytes:
    """The value of `meta`, in `version` (default: the one `value_version` picks)."""
    version = value_version(meta) if version is None else version
    if version not in VALUE_VERSIONS:
        raise ValueError(f"unknown transaction log value version {version}")
    if meta.state is TxnState.EMPTY and meta.partitions:
        raise ValueError("an Empty transaction has no partitions")
    out = bytearray(
        _HEAD.pack(version, meta.producer_id, meta.producer_epoch, meta.timeout_ms, meta.state.id)
    )
    topics = None if meta.state is TxnState.EMPTY else _by_topic(meta.partitions)
    if version == 0:
        _write_partitions_v0(out, topics)
    else:
        _write_partitions_v1(out, topics)
    out += _TIMES.pack(meta.last_update_ms, meta.start_ms)
    if version == 1:
        out += _tagged_fields(meta)
    return bytes(out)


def _write_partitions_v0(out: bytearray, topics: list[tuple[str, list[int]]] | None) -> None:
    if topics is None:
        out += _I32.pack(-1)
        return
    out += _I32.pack(len(topics))
    for topic, ids in topics:
        raw = topic.encode()
        out += _I16.pack(len(raw)) + raw + _I32.pack(len(ids))
        for pid in ids:
            out += _I32.pack(pid)


def _write_partitions_v1(out: bytearray, topics: list[tuple[str, list[int]]] | None) -> None:
    if topics is None:
        out += uvarint(0)
        return
    out += uvarint(len(topics) + 1)
    for topic, ids in topics:
        out += compact_string(topic) + uvarint(len(ids) + 1)
        for pid in ids:
            out += _I32.pack(pid)
        out += uvarint(0)  # the struct's empty tagged section


def _tagged_fields(meta: TransactionMetadata) -> bytes:
    fields: list[tuple[int, bytes]] = []
    if meta.previous_producer_id != NO_PRODUCER_ID:
        fields.append((_TAG_PREVIOUS_PRODUCER_ID, _I64.pack(meta.previous_producer_id)))
    if meta.next_producer_id != NO_PRODUCER_ID:
        fields.append((_TAG_NEXT_PRODUCER_ID, _I64.pack(meta.next_producer_id)))
    if meta.client_transaction_version != 0:
        fields.append((_TAG_CLIENT_TXN_VERSION, _I16.pack(meta.client_transaction_version)))
    out = bytearray(uvarint(len(fields)))
    for tag, data in fields:
        out += uvarint(tag) + uvarint(len(data)) + data
    return bytes(out)


def decode_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    try:
        return _decode_value(transactional_id, data)
    except (struct.error, WireFormatError, ValueError) as exc:
        raise RecordFormatError(f"bad transaction log value of {transactional_id!r}: {exc}") from None


def _decode_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    version, producer_id, epoch, timeout_ms, state_id = _HEAD.unpack_from(data, 0)
    if version not in VALUE_VERSIONS:
        raise ValueError(f"unknown value version {version}")
    pos = _HEAD.size
    if version == 0:
        partitions, pos = _read_partitions_v0(data, pos)
    else:
        partitions, pos = _read_partitions_v1(data, pos)
    last_update_ms, start_ms = _TIMES.unpack_from(data, pos)
    pos += _TIMES.size
    meta = TransactionMetadata(
        transactional_id,
        producer_id,
        epoch,
        timeout_ms,
        TxnState.from_id(state_id),
        partitions,
        last_update_ms,
        start_ms,
    )
    if version == 1:
        meta, pos = _read_tagged_fields(meta, data, pos)
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} bytes after the value")
    return meta


def _read_partitions_v0(data: bytes, pos: int) -> tuple[frozenset[TopicPartition], int]:
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    out: set[TopicPartition] = set()
    for _ in range(max(count, 0)):
        topic, pos = read_string(data, pos)
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        for _ in range(n):
            (partition,) = _I32.unpack_from(data, pos)
            pos += 4
            out.add(TopicPartition(topic or "", partition))
    return frozenset(out), pos


def _read_partitions_v1(data: bytes, pos: int) -> tuple[frozenset[TopicPartition], int]:
    count, pos = read_uvarint(data, pos)
    out: set[TopicPartition] = set()
    for _ in range(max(count - 1, 0)):
        topic, pos = read_compact_string(data, pos)
        n, pos = read_uvarint(data, pos)
        for _ in range(max(n - 1, 0)):
            (partition,) = _I32.unpack_from(data, pos)
            pos += 4
            out.add(TopicPartition(topic or "", partition))
        pos = skip_tagged_fields(data, pos)
    return frozenset(out), pos


def _read_tagged_fields(meta: TransactionMetadata, data: bytes, pos: int) -> tuple[TransactionMetadata, int]:
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        field = data[pos : pos + size]
        if len(field) != size:
            raise ValueError("tagged field runs past the end of the value")
        pos += size
        if tag == _TAG_PREVIOUS_PRODUCER_ID:
            meta = replace(meta, previous_producer_id=_I64.unpack(field)[0])
        elif tag == _TAG_NEXT_PRODUCER_ID:
            meta = replace(meta, next_producer_id=_I64.unpack(field)[0])
        elif tag == _TAG_CLIENT_TXN_VERSION:
            meta = replace(meta, client_transaction_version=_I16.unpack(field)[0])
    return meta, pos


# -- whole records ------------------------------------------------------------------------------------


def encode_record(record: TxnLogRecord, min_version: int = 0) -> tuple[bytes, bytes | None]:
    """The (key, value) of a record; a tombstone's value is None. The value is at least `min_version`."""
    if isinstance(record, TransactionTombstone):
        return encode_key(record.transactional_id), None
    meta = record.metadata
    return encode_key(record.transactional_id), encode_value(meta, max(value_version(meta), min_version))


def decode_record(key: bytes, value: bytes | None) -> TxnLogRecord | None:
    """The record of a (key, value) read back from the log; None for a key of another type."""
    transactional_id = decode_key(key)
    if transactional_id is None:
        return None
    if value is None:
        return TransactionTombstone(transactional_id)
    return TransactionRecord(decode_value(transactional_id, value))
