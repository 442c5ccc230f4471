"""`__share_group_state` records as Kafka's share coordinator writes them.

Key: int16 record type (0 ShareSnapshot, 1 ShareUpdate), then GroupId (int16-length string), TopicId
(16 bytes), Partition (int32). Values start with their int16 version (0) and are flexible:
ShareSnapshotValue: SnapshotEpoch, StateEpoch, LeaderEpoch (int32), StartOffset, CreateTimestamp,
WriteTimestamp (int64), StateBatches; ShareUpdateValue: SnapshotEpoch, LeaderEpoch (int32),
StartOffset (int64), StateBatches. A state batch is FirstOffset, LastOffset (int64), DeliveryState
(int8), DeliveryCount (int16). Tag 0 of both values is Kafka 4.2's DeliveryCompleteCount (int32).
The record lands on partition `abs(hash("group:topicId:partition")) % partitions`, Java's String hash
over the topic id in Kafka's base64 form, as Kafka's SharePartitionKey places it.
"""

from __future__ import annotations

import base64
import struct
import uuid
from dataclasses import dataclass, field

from kafkito.broker.offsets.partitioner import partition_for
from kafkito.broker.share.states import StateBatch
from kafkito.protocol.primitives import read_uvarint, skip_tagged_fields, uvarint

SHARE_STATE_TOPIC = "__share_group_state"
SNAPSHOT = 0
UPDATE = 1
VALUE_VERSION = 0

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_SNAP_HEAD = struct.Struct(">iiiqqq")  # snapshot epoch, state epoch, leader epoch, start, create, write
_UPDATE_HEAD = struct.Struct(">iiq")  # snapshot epoch, leader epoch, start offset
_BATCH = struct.Struct(">qqbh")


class StateFormatError(ValueError):
    """A `__share_group_state` record kafkito cannot read."""


@dataclass(frozen=True, slots=True)
class ShareStateKey:
    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(slots=True)
class ShareStateValue:
    """A ShareSnapshot (complete state) or a ShareUpdate (changes since the snapshot)."""

    kind: int
    snapshot_epoch: int
    start_offset: int  # -1 in an update that leaves it
    batches: list[StateBatch] = field(default_factory=list)
    state_epoch: int = 0
    leader_epoch: int = 0
    create_timestamp: int = -1
    write_timestamp: int = -1
    delivery_complete_count: int = -1


def kafka_uuid(topic_id: uuid.UUID) -> str:
    """Kafka's `Uuid.toString()`: url-safe base64 without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def state_partition(group_id: str, topic_id: uuid.UUID, partition: int, num_partitions: int) -> int:
    return partition_for(f"{group_id}:{kafka_uuid(topic_id)}:{partition}", num_partitions)


def encode_key(kind: int, key: ShareStateKey) -> bytes:
    group = key.group_id.encode()
    return _I16.pack(kind) + _I16.pack(len(group)) + group + key.topic_id.bytes + _I32.pack(key.partition)


def decode_key(raw: bytes) -> tuple[int, ShareStateKey]:
    try:
        (kind,) = _I16.unpack_from(raw, 0)
        (length,) = _I16.unpack_from(raw, 2)
        group = raw[4 : 4 + length].decode()
        pos = 4 + length
        topic_id = uuid.UUID(bytes=bytes(raw[pos : pos + 16]))
        (partition,) = _I32.unpack_from(raw, pos + 16)
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        raise StateFormatError(f"bad share state key: {exc}") from None
    if kind not in (SNAPSHOT, UPDATE) or length < 0:
        raise StateFormatError(f"not a share state key (type {kind})")
    return kind, ShareStateKey(group, topic_id, partition)


def encode_value(value: ShareStateValue) -> bytes:
    if value.kind == SNAPSHOT:
        head = _SNAP_HEAD.pack(
            value.snapshot_epoch, value.state_epoch, value.leader_epoch, value.start_offset,
            value.create_timestamp, value.write_timestamp,
        )  # fmt: skip
    else:
        head = _UPDATE_HEAD.pack(value.snapshot_epoch, value.leader_epoch, value.start_offset)
    parts = [_I16.pack(VALUE_VERSION), head, uvarint(len(value.batches) + 1)]
    for b in value.batches:
        parts.append(_BATCH.pack(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) + b"\x00")
    if value.delivery_complete_count >= 0:
        count = _I32.pack(value.delivery_complete_count)
        parts.append(b"\x01\x00" + uvarint(len(count)) + count)
    else:
        parts.append(b"\x00")
    return b"".join(parts)


def decode_value(kind: int, raw: bytes) -> ShareStateValue:
    try:
        return _decode_value(kind, raw)
    except (struct.error, IndexError, ValueError) as exc:
        raise StateFormatError(f"bad share state value: {exc}") from None


def _decode_value(kind: int, raw: bytes) -> ShareStateValue:
    (version,) = _I16.unpack_from(raw, 0)
    if version != VALUE_VERSION:
        raise StateFormatError(f"share state value version {version} is unknown")
    if kind == SNAPSHOT:
        snap, state_epoch, leader, start, created, written = _SNAP_HEAD.unpack_from(raw, 2)
        value = ShareStateValue(SNAPSHOT, snap, start, [], state_epoch, leader, created, written)
        pos = 2 + _SNAP_HEAD.size
    else:
        snap, leader, start = _UPDATE_HEAD.unpack_from(raw, 2)
        value = ShareStateValue(UPDATE, snap, start, [], leader_epoch=leader)
        pos = 2 + _UPDATE_HEAD.size
    count, pos = read_uvarint(raw, pos)
    for _ in range(count - 1):
        first, last, state, delivered = _BATCH.unpack_from(raw, pos)
        pos = skip_tagged_fields(raw, pos + _BATCH.size)
        value.batches.append(StateBatch(first, last, state, delivered))
    tags, pos = read_uvarint(raw, pos)
    for _ in range(tags):
        tag, pos = read_uvarint(raw, pos)
        size, pos = read_uvarint(raw, pos)
        if tag == 0 and size == 4:
            (value.delivery_complete_count,) = _I32.unpack_from(raw, pos)
        pos += size
    return value
