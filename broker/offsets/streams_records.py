"""Kafka's `__consumer_offsets` formats of KIP-1071 streams groups: keys and values of record types
17 and 19-23, encoded from and decoded to the coordinator's typed records (`coordinator.streams.records`).

A key is its int16 record type, then the group id and, for types 19, 21 and 22, the member id
(classic int16-length strings). A value is an int16 version (0) and its fields in the flexible
encoding (Kafka 4.4's generated StreamsGroup*Value classes); a null value is a tombstone:
- 17 group metadata: epoch, metadata hash (int64); tagged 0 the validated topology epoch (default -1),
  1 the last assignment configs (key/value pairs), 2 and 3 the topology description epochs (read
  and dropped: kafkito has no description plugin);
- 19 member metadata: instance id and rack id (nullable), client id, client host, rebalance timeout,
  topology epoch, process id, the user endpoint (a nullable struct: host, uint16 port), client tags;
- 20 target assignment metadata: the assignment epoch; tagged 0 the assignment's time (int64 ms);
- 21 target assignment member: active, standby and warm-up tasks (subtopology id, partitions);
- 22 current member assignment: member epoch, previous member epoch, state (int8), the three task
  lists and the three pending revocation; each task entry has tagged 0, the assignment epochs of its
  partitions (Kafka 4.4 writes them for active tasks; kafkito writes none and reads them as absent);
- 23 topology: its epoch and subtopologies (source topics and regexes, changelog topics,
  repartition sink and source topics, copartition groups by index).
Unknown tagged fields are skipped, as Kafka skips tags it does not know.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from kafkito.broker.coordinator.streams.records import (
    CURRENT_ASSIGNMENT_TYPE,
    MEMBER_TYPE,
    METADATA_TYPE,
    TARGET_MEMBER_TYPE,
    TARGET_METADATA_TYPE,
    TOPOLOGY_TYPE,
    StreamsGroupCurrentAssignmentRecord,
    StreamsGroupCurrentAssignmentTombstone,
    StreamsGroupMemberRecord,
    StreamsGroupMemberTombstone,
    StreamsGroupMetadataRecord,
    StreamsGroupMetadataTombstone,
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMemberRecord,
    StreamsGroupTargetAssignmentMemberTombstone,
    StreamsGroupTargetAssignmentMetadataRecord,
    StreamsGroupTargetAssignmentMetadataTombstone,
    StreamsGroupTopologyRecord,
    StreamsGroupTopologyTombstone,
)
from kafkito.broker.coordinator.streams.tasks import WireTasks
from kafkito.broker.coordinator.streams.topology import (
    Configs,
    CopartitionGroup,
    StreamsTopology,
    Subtopology,
    TopicInfo,
)
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
    tagged_section,
    version_of,
)
from kafkito.protocol.primitives import uvarint

RECORD_TYPE_NAMES = {
    METADATA_TYPE: "streams_group_metadata",
    MEMBER_TYPE: "streams_group_member_metadata",
    TARGET_METADATA_TYPE: "streams_group_target_assignment_metadata",
    TARGET_MEMBER_TYPE: "streams_group_target_assignment_member",
    CURRENT_ASSIGNMENT_TYPE: "streams_group_current_member_assignment",
    TOPOLOGY_TYPE: "streams_group_topology",
}
STREAMS_KEY_TYPES = frozenset(RECORD_TYPE_NAMES)
_MEMBER_KEYS = frozenset((MEMBER_TYPE, TARGET_MEMBER_TYPE, CURRENT_ASSIGNMENT_TYPE))
VALUE_VERSION = 0
_HEAD = I16.pack(VALUE_VERSION)
_U16 = struct.Struct(">H")
_NO_VALIDATED_TOPOLOGY = -1

REPLAY_ORDER: dict[type, int] = {
    StreamsGroupMetadataRecord: 0,
    StreamsGroupTopologyRecord: 1,
    StreamsGroupMemberRecord: 2,
    StreamsGroupTargetAssignmentMemberRecord: 3,
    StreamsGroupTargetAssignmentMetadataRecord: 4,
    StreamsGroupCurrentAssignmentRecord: 5,
}
"""The order a streams group's live records are replayed in on load (the group's epoch first)."""

_KEY_TYPES: dict[type, int] = {
    StreamsGroupMetadataRecord: METADATA_TYPE,
    StreamsGroupMetadataTombstone: METADATA_TYPE,
    StreamsGroupMemberRecord: MEMBER_TYPE,
    StreamsGroupMemberTombstone: MEMBER_TYPE,
    StreamsGroupTargetAssignmentMetadataRecord: TARGET_METADATA_TYPE,
    StreamsGroupTargetAssignmentMetadataTombstone: TARGET_METADATA_TYPE,
    StreamsGroupTargetAssignmentMemberRecord: TARGET_MEMBER_TYPE,
    StreamsGroupTargetAssignmentMemberTombstone: TARGET_MEMBER_TYPE,
    StreamsGroupCurrentAssignmentRecord: CURRENT_ASSIGNMENT_TYPE,
    StreamsGroupCurrentAssignmentTombstone: CURRENT_ASSIGNMENT_TYPE,
    StreamsGroupTopologyRecord: TOPOLOGY_TYPE,
    StreamsGroupTopologyTombstone: TOPOLOGY_TYPE,
}
_TOMBSTONES: dict[int, type] = {
    METADATA_TYPE: StreamsGroupMetadataTombstone,
    MEMBER_TYPE: StreamsGroupMemberTombstone,
    TARGET_METADATA_TYPE: StreamsGroupTargetAssignmentMetadataTombstone,
    TARGET_MEMBER_TYPE: StreamsGroupTargetAssignmentMemberTombstone,
    CURRENT_ASSIGNMENT_TYPE: StreamsGroupCurrentAssignmentTombstone,
    TOPOLOGY_TYPE: StreamsGroupTopologyTombstone,
}
_TOMBSTONE_TYPES = frozenset(_TOMBSTONES.values())


# -- keys ---------------------------------------------------------------------------------------


def is_streams_key(raw_key: bytes) -> bool:
    return len(raw_key) >= 2 and version_of(raw_key) in STREAMS_KEY_TYPES


def decode_streams_key(raw_key: bytes) -> tuple[int, str, str | None]:
    """(record type, group id, member id or None)."""
    t = version_of(raw_key)
    if t not in STREAMS_KEY_TYPES:
        raise RecordFormatError(f"{t} is not a streams-group record type")
    r = Reader(raw_key)
    group = r.string()
    member = r.string() if t in _MEMBER_KEYS else None
    r.end(f"a type {t} key")
    return t, group, member


# -- values: writing ----------------------------------------------------------------------------


def _array(items: Sequence[Any], item: Callable[[Any], bytes]) -> bytes:
    return uvarint(len(items) + 1) + b"".join(item(i) for i in items)


def _key_values(pairs: Configs) -> bytes:
    return _array(pairs, lambda kv: compact_string(kv[0]) + compact_string(kv[1]) + NO_TAGGED_FIELDS)


def _tasks(tasks: WireTasks) -> bytes:
    return _array(tasks, lambda t: compact_string(t[0]) + compact_int32s(t[1]) + NO_TAGGED_FIELDS)


def _int16s(items: Sequence[int]) -> bytes:
    return uvarint(len(items) + 1) + struct.pack(f">{len(items)}h", *items)


def _topic_info(info: TopicInfo) -> bytes:
    return (
        compact_string(info.name)
        + I32.pack(info.partitions)
        + I16.pack(info.replication_factor)
        + _key_values(info.configs)
        + NO_TAGGED_FIELDS
    )


def _copartition_group(group: CopartitionGroup) -> bytes:
    return (
        _int16s(group.source_topics)
        + _int16s(group.source_topic_regex)
        + _int16s(group.repartition_source_topics)
        + NO_TAGGED_FIELDS
    )


def _subtopology(s: Subtopology) -> bytes:
    return (
        compact_string(s.subtopology_id)
        + compact_strings(s.source_topics)
        + compact_strings(s.source_topic_regex)
        + _array(s.state_changelog_topics, _topic_info)
        + compact_strings(s.repartition_sink_topics)
        + _array(s.repartition_source_topics, _topic_info)
        + _array(s.copartition_groups, _copartition_group)
        + NO_TAGGED_FIELDS
    )


def _metadata(record: StreamsGroupMetadataRecord, _now_ms: int) -> bytes:
    tags = []
    if record.validated_topology_epoch != _NO_VALIDATED_TOPOLOGY:
        tags.append((0, I32.pack(record.validated_topology_epoch)))
    if record.last_assignment_configs:
        tags.append((1, _key_values(record.last_assignment_configs)))
    return I32.pack(record.epoch) + I64.pack(record.metadata_hash) + tagged_section(tags)


def _member(record: StreamsGroupMemberRecord, _now_ms: int) -> bytes:
    endpoint = record.user_endpoint
    if endpoint is None:
        endpoint_bytes = I8.pack(-1)
    else:
        endpoint_bytes = I8.pack(1) + compact_string(endpoint[0]) + _U16.pack(endpoint[1]) + NO_TAGGED_FIELDS
    return (
        compact_string(record.instance_id)
        + compact_string(record.rack_id)
        + compact_string(record.client_id)
        + compact_string(record.client_host)
        + I32.pack(record.rebalance_timeout_ms)
        + I32.pack(record.topology_epoch)
        + compact_string(record.process_id)
        + endpoint_bytes
        + _key_values(record.client_tags)
        + NO_TAGGED_FIELDS
    )


def _target_metadata(record: StreamsGroupTargetAssignmentMetadataRecord, now_ms: int) -> bytes:
    stamp = record.assignment_timestamp_ms or now_ms
    return I32.pack(record.assignment_epoch) + tagged_section([(0, I64.pack(stamp))])


def _target_member(record: StreamsGroupTargetAssignmentMemberRecord, _now_ms: int) -> bytes:
    return _tasks(record.active) + _tasks(record.standby) + _tasks(record.warmup) + NO_TAGGED_FIELDS


def _current(record: StreamsGroupCurrentAssignmentRecord, _now_ms: int) -> bytes:
    return (
        I32.pack(record.member_epoch)
        + I32.pack(record.previous_member_epoch)
        + I8.pack(record.state)
        + _tasks(record.active)
        + _tasks(record.standby)
        + _tasks(record.warmup)
        + _tasks(record.active_pending_revocation)
        + _tasks(record.standby_pending_revocation)
        + _tasks(record.warmup_pending_revocation)
        + NO_TAGGED_FIELDS
    )


def _topology(record: StreamsGroupTopologyRecord, _now_ms: int) -> bytes:
    topology = record.topology
    return I32.pack(topology.epoch) + _array(topology.subtopologies, _subtopology) + NO_TAGGED_FIELDS


_WRITERS: dict[type, Callable[[Any, int], bytes]] = {
    StreamsGroupMetadataRecord: _metadata,
    StreamsGroupMemberRecord: _member,
    StreamsGroupTargetAssignmentMetadataRecord: _target_metadata,
    StreamsGroupTargetAssignmentMemberRecord: _target_member,
    StreamsGroupCurrentAssignmentRecord: _current,
    StreamsGroupTopologyRecord: _topology,
}


def encode_streams_record(record: StreamsGroupRecord, now_ms: int) -> tuple[bytes, bytes | None]:
    """(key, value) bytes of one streams-group record written at `now_ms`; value None for a tombstone."""
    record_type = _KEY_TYPES[type(record)]
    key = I16.pack(record_type) + string(record.group_id)
    if record_type in _MEMBER_KEYS:
        key += string(getattr(record, "member_id"))  # noqa: B009 - the member-keyed types have it
    if type(record) in _TOMBSTONE_TYPES:
        return key, None
    return key, _HEAD + _WRITERS[type(record)](record, now_ms)


# -- values: reading ----------------------------------------------------------------------------


def _read_array(r: Reader, item: Callable[[Reader], Any]) -> tuple[Any, ...]:
    return tuple(item(r) for _ in range(r.array_length()))


def _read_key_value(r: Reader) -> tuple[str, str]:
    pair = (r.string(), r.string())
    r.tagged_fields()
    return pair


def _read_task(r: Reader) -> tuple[str, tuple[int, ...]]:
    task = (r.string(), r.int32s())
    r.tagged_fields()  # tag 0: the partitions' assignment epochs (Kafka 4.4), not kept
    return task


def _read_int16s(r: Reader) -> tuple[int, ...]:
    n = r.array_length()
    return tuple(struct.unpack(f">{n}h", r.take(2 * n)))


def _read_topic_info(r: Reader) -> TopicInfo:
    name, partitions, replication = r.string(), r.i32(), r.i16()
    configs = _read_array(r, _read_key_value)
    r.tagged_fields()
    return TopicInfo(name, partitions, replication, configs)


def _read_copartition_group(r: Reader) -> CopartitionGroup:
    group = CopartitionGroup(_read_int16s(r), _read_int16s(r), _read_int16s(r))
    r.tagged_fields()
    return group


def _read_subtopology(r: Reader) -> Subtopology:
    subtopology = Subtopology(
        r.string(),
        r.strings(),
        r.strings(),
        _read_array(r, _read_topic_info),
        r.strings(),
        _read_array(r, _read_topic_info),
        _read_array(r, _read_copartition_group),
    )
    r.tagged_fields()
    return subtopology


def _tags(r: Reader) -> dict[int, Reader]:
    return {tag: Reader(data, pos=0, flexible=True) for tag, data in r.tagged().items()}


def _read_metadata(r: Reader, g: str, _m: str) -> StreamsGroupRecord:
    epoch, metadata_hash = r.i32(), r.i64()
    tags = _tags(r)
    validated = tags[0].i32() if 0 in tags else _NO_VALIDATED_TOPOLOGY
    configs = _read_array(tags[1], _read_key_value) if 1 in tags else ()
    return StreamsGroupMetadataRecord(g, epoch, metadata_hash, validated, configs)


def _read_member(r: Reader, g: str, m: str) -> StreamsGroupRecord:
    instance_id, rack_id = r.nullable_string(), r.nullable_string()
    client_id, client_host = r.string(), r.string()
    rebalance_timeout_ms, topology_epoch = r.i32(), r.i32()
    process_id = r.string()
    endpoint = None
    if r.i8() >= 0:
        host = r.string()
        (port,) = _U16.unpack(r.take(2))
        r.tagged_fields()
        endpoint = (host, int(port))
    tags = _read_array(r, _read_key_value)
    r.tagged_fields()
    return StreamsGroupMemberRecord(
        g,
        m,
        instance_id,
        rack_id,
        client_id,
        client_host,
        rebalance_timeout_ms,
        topology_epoch,
        process_id,
        endpoint,
        tags,
    )


def _read_target_metadata(r: Reader, g: str, _m: str) -> StreamsGroupRecord:
    epoch = r.i32()
    stamp = r.tagged().get(0)  # tag 0: the assignment's time
    return StreamsGroupTargetAssignmentMetadataRecord(g, epoch, I64.unpack(stamp)[0] if stamp else 0)


def _read_target_member(r: Reader, g: str, m: str) -> StreamsGroupRecord:
    tasks = [_read_array(r, _read_task) for _ in range(3)]
    r.tagged_fields()
    return StreamsGroupTargetAssignmentMemberRecord(g, m, *tasks)


def _read_current(r: Reader, g: str, m: str) -> StreamsGroupRecord:
    epoch, previous, state = r.i32(), r.i32(), r.i8()
    tasks = [_read_array(r, _read_task) for _ in range(6)]
    r.tagged_fields()
    return StreamsGroupCurrentAssignmentRecord(g, m, epoch, previous, state, *tasks)


def _read_topology(r: Reader, g: str, _m: str) -> StreamsGroupRecord:
    epoch = r.i32()
    subtopologies = _read_array(r, _read_subtopology)
    r.tagged_fields()
    return StreamsGroupTopologyRecord(g, StreamsTopology(epoch, subtopologies))


_READERS: dict[int, Callable[[Reader, str, str], StreamsGroupRecord]] = {
    METADATA_TYPE: _read_metadata,
    MEMBER_TYPE: _read_member,
    TARGET_METADATA_TYPE: _read_target_metadata,
    TARGET_MEMBER_TYPE: _read_target_member,
    CURRENT_ASSIGNMENT_TYPE: _read_current,
    TOPOLOGY_TYPE: _read_topology,
}


def decode_streams_record(raw_key: bytes, raw_value: bytes | None) -> StreamsGroupRecord:
    """The typed record of a streams-group key and value (a tombstone for a null value); raises
    `RecordFormatError` for bytes that are not a valid key or value of the type."""
    record_type, group_id, member_id = decode_streams_key(raw_key)
    if raw_value is None:
        tombstone = _TOMBSTONES[record_type]
        record: StreamsGroupRecord = (
            tombstone(group_id, member_id) if member_id is not None else tombstone(group_id)
        )
        return record
    version = version_of(raw_value)
    if version != VALUE_VERSION:
        raise RecordFormatError(f"unknown {RECORD_TYPE_NAMES[record_type]} value version {version}")
    r = Reader(raw_value, flexible=True)
    record = _READERS[record_type](r, group_id, member_id or "")
    r.end(f"a {RECORD_TYPE_NAMES[record_type]} value")
    return record


def describe_streams_record(record: StreamsGroupRecord) -> dict[str, Any]:
    """A JSON-able view of a streams-group record (`kafkito offsets dump`)."""

    def plain(value: Any) -> Any:
        if hasattr(value, "_asdict"):
            return {k: plain(v) for k, v in value._asdict().items()}
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    fields: dict[str, Any] = {"type": type(record).__name__}
    fields.update({k: plain(v) for k, v in record._asdict().items()})
    return fields
