"""Kafka's `__consumer_offsets` formats of KIP-932 share groups: keys and values of record types 9-15,
encoded from and decoded to the coordinator's typed records (`coordinator.share.records`).

A key is its int16 record type, then the group id and, for types 10, 13 and 14, the member id
(classic int16-length strings). A value is an int16 version (0) and its fields in the flexible
encoding; a null value is a tombstone. The values:
- 9 partition metadata (Kafka 4.0; read only): topics with id, name, partition count and racks;
- 10 member metadata: rack id (nullable), client id, client host, subscribed topic names;
- 11 group metadata: the group epoch and the subscribed topics' metadata hash (int64);
- 12 target assignment metadata: the assignment epoch;
- 13 target assignment member: topic partitions (topic id, partitions);
- 14 current member assignment: member epoch, previous member epoch, state (int8), partitions;
- 15 state partition metadata: initializing and initialized topics (id, name, partitions), and
  deleting topics (id, name).
Unknown tagged fields are skipped, as Kafka skips tags it does not know.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kafkito.broker.coordinator.share.records import (
    Assignment,
    ShareGroupCurrentAssignmentRecord,
    ShareGroupCurrentAssignmentTombstone,
    ShareGroupMemberRecord,
    ShareGroupMemberTombstone,
    ShareGroupMetadataRecord,
    ShareGroupMetadataTombstone,
    ShareGroupPartitionMetadataRecord,
    ShareGroupPartitionMetadataTombstone,
    ShareGroupRecord,
    ShareGroupStatePartitionMetadataRecord,
    ShareGroupStatePartitionMetadataTombstone,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupTargetAssignmentMetadataRecord,
    ShareGroupTargetAssignmentMetadataTombstone,
)
from kafkito.broker.offsets.consumer_records import PARTITION_METADATA, decode_consumer_value
from kafkito.broker.offsets.encoding import (
    I8,
    I16,
    I32,
    I64,
    NO_TAGGED_FIELDS,
    Reader,
    RecordFormatError,
    compact_int32s,
    compact_string,
    compact_strings,
    string,
    version_of,
)
from kafkito.protocol.primitives import uvarint

PARTITION_METADATA_TYPE = 9
MEMBER_METADATA = 10
GROUP_METADATA = 11
TARGET_ASSIGNMENT_METADATA = 12
TARGET_ASSIGNMENT_MEMBER = 13
CURRENT_MEMBER_ASSIGNMENT = 14
STATE_PARTITION_METADATA = 15

RECORD_TYPE_NAMES = {
    PARTITION_METADATA_TYPE: "share_group_partition_metadata",
    MEMBER_METADATA: "share_group_member_metadata",
    GROUP_METADATA: "share_group_metadata",
    TARGET_ASSIGNMENT_METADATA: "share_group_target_assignment_metadata",
    TARGET_ASSIGNMENT_MEMBER: "share_group_target_assignment_member",
    CURRENT_MEMBER_ASSIGNMENT: "share_group_current_member_assignment",
    STATE_PARTITION_METADATA: "share_group_state_partition_metadata",
}
SHARE_KEY_TYPES = frozenset(RECORD_TYPE_NAMES)
_MEMBER_KEYS = frozenset((MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT))
VALUE_VERSION = 0
_HEAD = I16.pack(VALUE_VERSION)

TopicInfos = tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]

REPLAY_ORDER: dict[type, int] = {
    ShareGroupMetadataRecord: 0,
    ShareGroupMemberRecord: 1,
    ShareGroupTargetAssignmentMemberRecord: 2,
    ShareGroupTargetAssignmentMetadataRecord: 3,
    ShareGroupCurrentAssignmentRecord: 4,
    ShareGroupStatePartitionMetadataRecord: 5,
}
"""The order a share group's live records are replayed in on load (the group's epoch first)."""


# -- keys ---------------------------------------------------------------------------------------


def is_share_key(raw_key: bytes) -> bool:
    return len(raw_key) >= 2 and version_of(raw_key) in SHARE_KEY_TYPES


def _key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    out = I16.pack(record_type) + string(group_id)
    return out + string(member_id) if member_id is not None else out


def decode_share_key(raw_key: bytes) -> tuple[int, str, str | None]:
    """(record type, group id, member id or None)."""
    t = version_of(raw_key)
    if t not in SHARE_KEY_TYPES:
        raise RecordFormatError(f"{t} is not a share-group record type")
    r = Reader(raw_key)
    group = r.string()
    member = r.string() if t in _MEMBER_KEYS else None
    r.end(f"a type {t} key")
    return t, group, member


# -- values: writing ----------------------------------------------------------------------------


def _topic_partitions(assignment: Assignment) -> bytes:
    out = bytearray(uvarint(len(assignment) + 1))
    for topic_id, partitions in assignment:
        out += topic_id.bytes + compact_int32s(partitions) + NO_TAGGED_FIELDS
    return bytes(out)


def _topic_infos(topics: TopicInfos) -> bytes:
    out = bytearray(uvarint(len(topics) + 1))
    for topic_id, name, partitions in topics:
        out += topic_id.bytes + compact_string(name) + compact_int32s(partitions) + NO_TAGGED_FIELDS
    return bytes(out)


def _deleting(topics: tuple[tuple[uuid.UUID, str], ...]) -> bytes:
    out = bytearray(uvarint(len(topics) + 1))
    for topic_id, name in topics:
        out += topic_id.bytes + compact_string(name) + NO_TAGGED_FIELDS
    return bytes(out)


def _value(record: ShareGroupRecord) -> bytes:
    if isinstance(record, ShareGroupMetadataRecord):
        body = I32.pack(record.epoch) + I64.pack(record.metadata_hash)
    elif isinstance(record, ShareGroupMemberRecord):
        body = (
            compact_string(record.rack_id)
            + compact_string(record.client_id)
            + compact_string(record.client_host)
            + compact_strings(record.subscribed_topic_names)
        )
    elif isinstance(record, ShareGroupTargetAssignmentMetadataRecord):
        body = I32.pack(record.assignment_epoch)
    elif isinstance(record, ShareGroupTargetAssignmentMemberRecord):
        body = _topic_partitions(record.assignment)
    elif isinstance(record, ShareGroupCurrentAssignmentRecord):
        body = (
            I32.pack(record.member_epoch)
            + I32.pack(record.previous_member_epoch)
            + I8.pack(record.state)
            + _topic_partitions(record.assigned)
        )
    elif isinstance(record, ShareGroupStatePartitionMetadataRecord):
        body = (
            _topic_infos(record.initializing) + _topic_infos(record.initialized) + _deleting(record.deleting)
        )
    else:
        raise RecordFormatError(f"kafkito does not write {type(record).__name__}")
    return _HEAD + body + NO_TAGGED_FIELDS


_KEY_TYPES: dict[type, int] = {
    ShareGroupPartitionMetadataRecord: PARTITION_METADATA_TYPE,
    ShareGroupPartitionMetadataTombstone: PARTITION_METADATA_TYPE,
    ShareGroupMemberRecord: MEMBER_METADATA,
    ShareGroupMemberTombstone: MEMBER_METADATA,
    ShareGroupMetadataRecord: GROUP_METADATA,
    ShareGroupMetadataTombstone: GROUP_METADATA,
    ShareGroupTargetAssignmentMetadataRecord: TARGET_ASSIGNMENT_METADATA,
    ShareGroupTargetAssignmentMetadataTombstone: TARGET_ASSIGNMENT_METADATA,
    ShareGroupTargetAssignmentMemberRecord: TARGET_ASSIGNMENT_MEMBER,
    ShareGroupTargetAssignmentMemberTombstone: TARGET_ASSIGNMENT_MEMBER,
    ShareGroupCurrentAssignmentRecord: CURRENT_MEMBER_ASSIGNMENT,
    ShareGroupCurrentAssignmentTombstone: CURRENT_MEMBER_ASSIGNMENT,
    ShareGroupStatePartitionMetadataRecord: STATE_PARTITION_METADATA,
    ShareGroupStatePartitionMetadataTombstone: STATE_PARTITION_METADATA,
}
_TOMBSTONES: dict[int, type] = {
    PARTITION_METADATA_TYPE: ShareGroupPartitionMetadataTombstone,
    MEMBER_METADATA: ShareGroupMemberTombstone,
    GROUP_METADATA: ShareGroupMetadataTombstone,
    TARGET_ASSIGNMENT_METADATA: ShareGroupTargetAssignmentMetadataTombstone,
    TARGET_ASSIGNMENT_MEMBER: ShareGroupTargetAssignmentMemberTombstone,
    CURRENT_MEMBER_ASSIGNMENT: ShareGroupCurrentAssignmentTombstone,
    STATE_PARTITION_METADATA: ShareGroupStatePartitionMetadataTombstone,
}


def encode_share_record(record: ShareGroupRecord) -> tuple[bytes, bytes | None]:
    """(key, value) bytes of one share-group record; value None for a tombstone."""
    record_type = _KEY_TYPES[type(record)]
    member_id = getattr(record, "member_id", None) if record_type in _MEMBER_KEYS else None
    key = _key(record_type, record.group_id, member_id)
    if type(record) in _TOMBSTONES.values():
        return key, None
    return key, _value(record)


# -- values: reading ----------------------------------------------------------------------------


def _read_topic_partitions(r: Reader) -> Assignment:
    out = []
    for _ in range(r.array_length()):
        topic_id = r.uuid()
        partitions = r.int32s()
        r.tagged_fields()
        out.append((topic_id, partitions))
    return tuple(out)


def _read_topic_infos(r: Reader) -> TopicInfos:
    out = []
    for _ in range(r.array_length()):
        topic_id, name, partitions = r.uuid(), r.string(), r.int32s()
        r.tagged_fields()
        out.append((topic_id, name, partitions))
    return tuple(out)


def _read_deleting(r: Reader) -> tuple[tuple[uuid.UUID, str], ...]:
    out = []
    for _ in range(r.array_length()):
        topic_id, name = r.uuid(), r.string()
        r.tagged_fields()
        out.append((topic_id, name))
    return tuple(out)


def _member(r: Reader, g: str, m: str) -> ShareGroupRecord:
    rack, client_id, client_host = r.nullable_string(), r.string(), r.string()
    return ShareGroupMemberRecord(g, m, rack, client_id, client_host, r.strings())


def _group(r: Reader, g: str, _m: str) -> ShareGroupRecord:
    return ShareGroupMetadataRecord(g, r.i32(), r.i64())


def _target_metadata(r: Reader, g: str, _m: str) -> ShareGroupRecord:
    return ShareGroupTargetAssignmentMetadataRecord(g, r.i32())


def _target_member(r: Reader, g: str, m: str) -> ShareGroupRecord:
    return ShareGroupTargetAssignmentMemberRecord(g, m, _read_topic_partitions(r))


def _current(r: Reader, g: str, m: str) -> ShareGroupRecord:
    epoch, previous, state = r.i32(), r.i32(), r.i8()
    return ShareGroupCurrentAssignmentRecord(g, m, epoch, previous, state, _read_topic_partitions(r))


def _state(r: Reader, g: str, _m: str) -> ShareGroupRecord:
    initializing = _read_topic_infos(r)
    initialized = _read_topic_infos(r)
    return ShareGroupStatePartitionMetadataRecord(g, initializing, initialized, _read_deleting(r))


_READERS: dict[int, Callable[[Reader, str, str], ShareGroupRecord]] = {
    MEMBER_METADATA: _member,
    GROUP_METADATA: _group,
    TARGET_ASSIGNMENT_METADATA: _target_metadata,
    TARGET_ASSIGNMENT_MEMBER: _target_member,
    CURRENT_MEMBER_ASSIGNMENT: _current,
    STATE_PARTITION_METADATA: _state,
}


def decode_share_record(raw_key: bytes, raw_value: bytes | None) -> ShareGroupRecord:
    """The typed record of a share-group key and value (a tombstone for a null value); raises
    `RecordFormatError` for bytes that are not a valid key or value of the type."""
    record_type, group_id, member_id = decode_share_key(raw_key)
    if raw_value is None:
        tombstone = _TOMBSTONES[record_type]
        return tombstone(group_id, member_id) if member_id is not None else tombstone(group_id)  # type: ignore[no-any-return]
    if record_type == PARTITION_METADATA_TYPE:
        # Kafka 4.0's subscribed-topic metadata has the layout of the consumer group's (type 4).
        v: Any = decode_consumer_value(PARTITION_METADATA, raw_value)
        return ShareGroupPartitionMetadataRecord(
            group_id, tuple((t.topic_id, t.name, t.num_partitions) for t in v.topics)
        )
    version = version_of(raw_value)
    if version != VALUE_VERSION:
        raise RecordFormatError(f"unknown {RECORD_TYPE_NAMES[record_type]} value version {version}")
    r = Reader(raw_value, flexible=True)
    record = _READERS[record_type](r, group_id, member_id or "")
    r.tagged_fields()
    r.end(f"a {RECORD_TYPE_NAMES[record_type]} value")
    return record


def describe_share_record(record: ShareGroupRecord, topic_names: dict[uuid.UUID, str]) -> dict[str, Any]:
    """A JSON-able view of a share-group record (`kafkito offsets dump`)."""
    fields: dict[str, Any] = {"type": type(record).__name__}
    for name, value in record._asdict().items():
        if name in ("assigned", "assignment"):
            value = [
                {"topic_id": str(t), "topic": topic_names.get(t), "partitions": list(p)} for t, p in value
            ]
        elif name in ("initializing", "initialized"):
            value = [{"topic_id": str(t), "topic": n, "partitions": list(p)} for t, n, p in value]
        elif name == "deleting":
            value = [{"topic_id": str(t), "topic": n} for t, n in value]
        elif isinstance(value, tuple):
            value = list(value)
        fields[name] = value
    return fields
