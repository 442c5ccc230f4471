"""Kafka's `__consumer_offsets` formats of KIP-848 consumer groups: keys and values of record types
3-8 and 16, as Kafka 4.x writes them.

A key is an int16 record type followed by its fields in the classic encoding (int16 string
lengths): the group id, then the member id (types 5, 7, 8) or the regular expression (16). A value
is an int16 version (0 for every type) followed by the fields in the flexible encoding; the tagged
fields known here are the group's metadata hash (type 3, tag 0, Kafka 4.1), its creation time (type
3, tag 1, a later Kafka) and a classic member's metadata (type 5, tag 0); other tags are skipped, as
Kafka skips tags it does not know. A null value is a tombstone. Timestamps are wall-clock epoch
milliseconds. Type 4 (subscribed topic metadata) is what Kafka 4.0 writes instead of the metadata
hash: it is read, and written only for tests and tools.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, TypeAlias

from kafkito.broker.offsets.encoding import (
    I8,
    I16,
    I32,
    I64,
    NO_TAGGED_FIELDS,
    Reader,
    RecordFormatError,
    compact_bytes,
    compact_int32s,
    compact_string,
    compact_strings,
    string,
    tagged_section,
    version_of,
)
from kafkito.protocol.primitives import uvarint

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
REGULAR_EXPRESSION = 16

RECORD_TYPE_NAMES = {
    GROUP_METADATA: "consumer_group_metadata",
    PARTITION_METADATA: "consumer_group_partition_metadata",
    MEMBER_METADATA: "consumer_group_member_metadata",
    TARGET_ASSIGNMENT_METADATA: "consumer_group_target_assignment_metadata",
    TARGET_ASSIGNMENT_MEMBER: "consumer_group_target_assignment_member",
    CURRENT_MEMBER_ASSIGNMENT: "consumer_group_current_member_assignment",
    REGULAR_EXPRESSION: "consumer_group_regular_expression",
}
CONSUMER_KEY_TYPES = frozenset(RECORD_TYPE_NAMES)
_MEMBER_KEYS = frozenset((MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT))
VALUE_VERSION = 0

# (topic id, partitions) pairs in the order they are written: Kafka's TopicPartitions struct.
TopicPartitions: TypeAlias = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]

# Values are NamedTuples, as in `records` (imported at every start); the key stays a dataclass.


@dataclass(slots=True, frozen=True)
class ConsumerGroupKey:
    """The key of a consumer-group record: its type, the group, and the member id (types 5, 7, 8) or
    the regular expression (type 16)."""

    record_type: int
    group: str
    member_id: str | None = None
    regex: str | None = None


class GroupMetadataValue(NamedTuple):
    """Type 3: the group epoch; the subscribed topics' metadata hash (0 = none) and the creation
    time (-1 = unknown) are tagged fields."""

    epoch: int
    metadata_hash: int = 0
    creation_time_ms: int = -1


class TopicMetadataValue(NamedTuple):
    topic_id: uuid.UUID
    name: str
    num_partitions: int
    partition_racks: tuple[tuple[int, tuple[str, ...]], ...] = ()


class PartitionMetadataValue(NamedTuple):
    """Type 4 (Kafka 4.0): the subscribed topics' ids, names, partition counts and racks."""

    topics: tuple[TopicMetadataValue, ...]


class ClassicMemberValue(NamedTuple):
    """A classic-protocol member of a consumer group: its session timeout and JoinGroup protocols."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


class MemberMetadataValue(NamedTuple):
    """Type 5: a member's identity and subscription."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member: ClassicMemberValue | None = None


class TargetAssignmentMetadataValue(NamedTuple):
    """Type 6: the epoch of the group's target assignment, and when it was computed (tagged field 0,
    written when not 0)."""

    assignment_epoch: int
    assignment_timestamp_ms: int = 0


class TargetAssignmentMemberValue(NamedTuple):
    """Type 7: one member's target assignment."""

    topic_partitions: TopicPartitions


class CurrentMemberAssignmentValue(NamedTuple):
    """Type 8: a member's epochs, reconciliation state, owned and to-be-revoked partitions."""

    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: TopicPartitions
    partitions_pending_revocation: TopicPartitions


class RegularExpressionValue(NamedTuple):
    """Type 16: the topics a subscription regex resolved to, the metadata version it was resolved
    at and when (wall-clock ms)."""

    topics: tuple[str, ...]
    version: int
    timestamp: int


ConsumerValue: TypeAlias = (
    GroupMetadataValue
    | PartitionMetadataValue
    | MemberMetadataValue
    | TargetAssignmentMetadataValue
    | TargetAssignmentMemberValue
    | CurrentMemberAssignmentValue
    | RegularExpressionValue
)


# -- keys ---------------------------------------------------------------------------------------


def encode_consumer_key(key: ConsumerGroupKey) -> bytes:
    t = key.record_type
    if t not in CONSUMER_KEY_TYPES:
        raise RecordFormatError(f"{t} is not a consumer-group record type")
    second = key.member_id if t in _MEMBER_KEYS else key.regex if t == REGULAR_EXPRESSION else ""
    if second is None:
        raise RecordFormatError(f"a type {t} key needs its member id or regular expression")
    out = I16.pack(t) + string(key.group)
    return out + string(second) if t in _MEMBER_KEYS or t == REGULAR_EXPRESSION else out


def decode_consumer_key(buf: bytes) -> ConsumerGroupKey:
    t = version_of(buf)
    if t not in CONSUMER_KEY_TYPES:
        raise RecordFormatError(f"{t} is not a consumer-group record type")
    r = Reader(buf)
    group = r.string()
    if t in _MEMBER_KEYS:
        key = ConsumerGroupKey(t, group, member_id=r.string())
    elif t == REGULAR_EXPRESSION:
        key = ConsumerGroupKey(t, group, regex=r.string())
    else:
        key = ConsumerGroupKey(t, group)
    r.end(f"a type {t} key")
    return key


# -- values: writing ----------------------------------------------------------------------------


def _topic_partitions(assignment: TopicPartitions) -> bytes:
    out = bytearray(uvarint(len(assignment) + 1))
    for topic_id, partitions in assignment:
        out += topic_id.bytes
        out += compact_int32s(partitions)
        out += NO_TAGGED_FIELDS
    return bytes(out)


def _group_metadata(v: GroupMetadataValue) -> bytes:
    tags = []
    if v.metadata_hash != 0:
        tags.append((0, I64.pack(v.metadata_hash)))
    if v.creation_time_ms != -1:
        tags.append((1, I64.pack(v.creation_time_ms)))
    return I32.pack(v.epoch) + tagged_section(tags)


def _partition_metadata(v: PartitionMetadataValue) -> bytes:
    out = bytearray(uvarint(len(v.topics) + 1))
    for t in v.topics:
        out += t.topic_id.bytes + compact_string(t.name) + I32.pack(t.num_partitions)
        out += uvarint(len(t.partition_racks) + 1)
        for partition, racks in t.partition_racks:
            out += I32.pack(partition) + compact_strings(racks) + NO_TAGGED_FIELDS
        out += NO_TAGGED_FIELDS
    return bytes(out + NO_TAGGED_FIELDS)


def _classic_member(c: ClassicMemberValue) -> bytes:
    out = bytearray(I32.pack(c.session_timeout_ms))
    out += uvarint(len(c.supported_protocols) + 1)
    for name, metadata in c.supported_protocols:
        out += compact_string(name) + compact_bytes(metadata) + NO_TAGGED_FIELDS
    # A nullable struct in a tagged field is preceded by its presence (unsigned varint 1).
    return b"\x01" + bytes(out) + NO_TAGGED_FIELDS


def _member_metadata(v: MemberMetadataValue) -> bytes:
    tags = [] if v.classic_member is None else [(0, _classic_member(v.classic_member))]
    return (
        compact_string(v.instance_id)
        + compact_string(v.rack_id)
        + compact_string(v.client_id)
        + compact_string(v.client_host)
        + compact_strings(v.subscribed_topic_names)
        + compact_string(v.subscribed_topic_regex)
        + I32.pack(v.rebalance_timeout_ms)
        + compact_string(v.server_assignor)
        + tagged_section(tags)
    )


def _current_assignment(v: CurrentMemberAssignmentValue) -> bytes:
    return (
        I32.pack(v.member_epoch)
        + I32.pack(v.previous_member_epoch)
        + I8.pack(v.state)
        + _topic_partitions(v.assigned_partitions)
        + _topic_partitions(v.partitions_pending_revocation)
        + NO_TAGGED_FIELDS
    )


def _regular_expression(v: RegularExpressionValue) -> bytes:
    return compact_strings(v.topics) + I64.pack(v.version) + I64.pack(v.timestamp) + NO_TAGGED_FIELDS


def encode_consumer_value(value: ConsumerValue) -> bytes:
    """Version 0 of the value, prefixed by its int16 version."""
    head = I16.pack(VALUE_VERSION)
    if isinstance(value, GroupMetadataValue):
        return head + _group_metadata(value)
    if isinstance(value, MemberMetadataValue):
        return head + _member_metadata(value)
    if isinstance(value, TargetAssignmentMetadataValue):
        stamp = value.assignment_timestamp_ms
        tags = [(0, I64.pack(stamp))] if stamp != 0 else []
        return head + I32.pack(value.assignment_epoch) + tagged_section(tags)
    if isinstance(value, TargetAssignmentMemberValue):
        return head + _topic_partitions(value.topic_partitions) + NO_TAGGED_FIELDS
    if isinstance(value, CurrentMemberAssignmentValue):
        return head + _current_assignment(value)
    if isinstance(value, RegularExpressionValue):
        return head + _regular_expression(value)
    return head + _partition_metadata(value)


# -- values: reading ----------------------------------------------------------------------------


def _read_topic_partitions(r: Reader) -> TopicPartitions:
    out = []
    for _ in range(r.array_length()):
        topic_id = r.uuid()
        partitions = r.int32s()
        r.tagged_fields()  # later Kafka's per-partition assignment epochs (KIP-1251) are skipped
        out.append((topic_id, partitions))
    return tuple(out)


def _tag_int64(fields: dict[int, bytes], tag: int, default: int) -> int:
    data = fields.get(tag)
    if data is None:
        return default
    if len(data) != 8:
        raise RecordFormatError(f"tagged int64 field {tag} has {len(data)} bytes")
    return int(I64.unpack(data)[0])


def _read_group_metadata(r: Reader) -> GroupMetadataValue:
    epoch = r.i32()
    tags = r.tagged()
    return GroupMetadataValue(epoch, _tag_int64(tags, 0, 0), _tag_int64(tags, 1, -1))


def _read_topic_metadata(r: Reader) -> TopicMetadataValue:
    topic_id, name, count = r.uuid(), r.string(), r.i32()
    racks = []
    for _ in range(r.array_length()):
        partition = r.i32()
        racks.append((partition, r.strings()))
        r.tagged_fields()
    r.tagged_fields()
    return TopicMetadataValue(topic_id, name, count, tuple(racks))


def _read_partition_metadata(r: Reader) -> PartitionMetadataValue:
    topics = tuple(_read_topic_metadata(r) for _ in range(r.array_length()))
    r.tagged_fields()
    return PartitionMetadataValue(topics)


def _read_classic_member(data: bytes) -> ClassicMemberValue | None:
    r = Reader(data, 0, flexible=True)
    if r.uvarint() == 0:  # the nullable struct's presence
        return None
    session_timeout = r.i32()
    protocols = []
    for _ in range(r.array_length()):
        name = r.string()
        protocols.append((name, r.bytes_()))
        r.tagged_fields()
    r.tagged_fields()
    r.end("the classic member metadata")
    return ClassicMemberValue(session_timeout, tuple(protocols))


def _read_member_metadata(r: Reader) -> MemberMetadataValue:
    instance_id, rack_id = r.nullable_string(), r.nullable_string()
    client_id, client_host = r.string(), r.string()
    topics = r.strings()
    regex = r.nullable_string()
    rebalance_timeout = r.i32()
    assignor = r.nullable_string()
    classic = r.tagged().get(0)
    return MemberMetadataValue(
        instance_id,
        rack_id,
        client_id,
        client_host,
        topics,
        regex,
        rebalance_timeout,
        assignor,
        None if classic is None else _read_classic_member(classic),
    )


def _read_target_metadata(r: Reader) -> TargetAssignmentMetadataValue:
    epoch = r.i32()
    return TargetAssignmentMetadataValue(epoch, _tag_int64(r.tagged(), 0, 0))


def _read_target_member(r: Reader) -> TargetAssignmentMemberValue:
    partitions = _read_topic_partitions(r)
    r.tagged_fields()
    return TargetAssignmentMemberValue(partitions)


def _read_current_assignment(r: Reader) -> CurrentMemberAssignmentValue:
    epoch, previous, state = r.i32(), r.i32(), r.i8()
    assigned = _read_topic_partitions(r)
    pending = _read_topic_partitions(r)
    r.tagged_fields()
    return CurrentMemberAssignmentValue(epoch, previous, state, assigned, pending)


def _read_regular_expression(r: Reader) -> RegularExpressionValue:
    topics = r.strings()
    version, timestamp = r.i64(), r.i64()
    r.tagged_fields()
    return RegularExpressionValue(topics, version, timestamp)


_READERS: dict[int, Callable[[Reader], ConsumerValue]] = {
    GROUP_METADATA: _read_group_metadata,
    PARTITION_METADATA: _read_partition_metadata,
    MEMBER_METADATA: _read_member_metadata,
    TARGET_ASSIGNMENT_METADATA: _read_target_metadata,
    TARGET_ASSIGNMENT_MEMBER: _read_target_member,
    CURRENT_MEMBER_ASSIGNMENT: _read_current_assignment,
    REGULAR_EXPRESSION: _read_regular_expression,
}


def decode_consumer_value(record_type: int, buf: bytes) -> ConsumerValue:
    """The value of a type `record_type` record (never null: a null value is a tombstone)."""
    read = _READERS.get(record_type)
    if read is None:
        raise RecordFormatError(f"{record_type} is not a consumer-group record type")
    version = version_of(buf)
    if version != VALUE_VERSION:
        raise RecordFormatError(f"unknown {RECORD_TYPE_NAMES[record_type]} value version {version}")
    r = Reader(buf, flexible=True)
    value = read(r)
    r.end(f"a {RECORD_TYPE_NAMES[record_type]} value")
    return value


VALUE_TYPES: dict[type, int] = {
    GroupMetadataValue: GROUP_METADATA,
    PartitionMetadataValue: PARTITION_METADATA,
    MemberMetadataValue: MEMBER_METADATA,
    TargetAssignmentMetadataValue: TARGET_ASSIGNMENT_METADATA,
    TargetAssignmentMemberValue: TARGET_ASSIGNMENT_MEMBER,
    CurrentMemberAssignmentValue: CURRENT_MEMBER_ASSIGNMENT,
    RegularExpressionValue: REGULAR_EXPRESSION,
}
"""The record type each value class belongs to."""
