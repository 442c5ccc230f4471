"""Consumer-group records between the coordinator's typed form and their `__consumer_offsets` bytes.

The log sink encodes a `ConsumerGroupRecord` (tombstones as a key with a null value) and the loader
decodes one back. The only timestamp, a regular expression's resolution time, is epoch milliseconds
in both (the broker clock's). Assignments are
read back in the coordinator's canonical form (topics sorted by id, partitions sorted), whatever
order the writer used.
"""

from __future__ import annotations

import uuid

from kafkito.broker.coordinator.consumer.records import (
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberRecord,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataRecord,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    to_assignment,
)
from kafkito.broker.offsets.consumer_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    REGULAR_EXPRESSION,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    ClassicMemberValue,
    ConsumerGroupKey,
    ConsumerValue,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    PartitionMetadataValue,
    RegularExpressionValue,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataValue,
    TopicMetadataValue,
    TopicPartitions,
    decode_consumer_value,
    encode_consumer_key,
    encode_consumer_value,
)

_TOMBSTONE_TYPES: dict[type, int] = {
    ConsumerGroupMetadataTombstone: GROUP_METADATA,
    ConsumerGroupPartitionMetadataTombstone: PARTITION_METADATA,
    ConsumerGroupMemberTombstone: MEMBER_METADATA,
    ConsumerGroupTargetAssignmentMetadataTombstone: TARGET_ASSIGNMENT_METADATA,
    ConsumerGroupTargetAssignmentMemberTombstone: TARGET_ASSIGNMENT_MEMBER,
    ConsumerGroupCurrentAssignmentTombstone: CURRENT_MEMBER_ASSIGNMENT,
    ConsumerGroupRegexTombstone: REGULAR_EXPRESSION,
}

REPLAY_ORDER: dict[type, int] = {
    ConsumerGroupMetadataRecord: 0,
    ConsumerGroupPartitionMetadataRecord: 1,
    ConsumerGroupMemberRecord: 2,
    ConsumerGroupRegexRecord: 3,
    ConsumerGroupTargetAssignmentMemberRecord: 4,
    ConsumerGroupTargetAssignmentMetadataRecord: 5,
    ConsumerGroupCurrentAssignmentRecord: 6,
}
"""The order a group's live records are replayed in on load: the group (its epoch) first, then its
members and regular expressions, the target assignment, and each member's current assignment."""


# -- typed record -> bytes ----------------------------------------------------------------------


def _member_value(r: ConsumerGroupMemberRecord) -> MemberMetadataValue:
    classic = r.classic_member
    return MemberMetadataValue(
        r.instance_id,
        r.rack_id,
        r.client_id,
        r.client_host,
        r.subscribed_topic_names,
        r.subscribed_topic_regex,
        r.rebalance_timeout_ms,
        r.server_assignor,
        None
        if classic is None
        else ClassicMemberValue(classic.session_timeout_ms, classic.supported_protocols),
    )


def _key_and_value(r: ConsumerGroupRecord) -> tuple[ConsumerGroupKey, ConsumerValue]:
    g = r.group_id
    if isinstance(r, ConsumerGroupMetadataRecord):
        return ConsumerGroupKey(GROUP_METADATA, g), GroupMetadataValue(r.epoch, r.metadata_hash)
    if isinstance(r, ConsumerGroupMemberRecord):
        return ConsumerGroupKey(MEMBER_METADATA, g, r.member_id), _member_value(r)
    if isinstance(r, ConsumerGroupTargetAssignmentMetadataRecord):
        return ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, g), TargetAssignmentMetadataValue(
            r.assignment_epoch, r.assignment_timestamp_ms
        )
    if isinstance(r, ConsumerGroupTargetAssignmentMemberRecord):
        return ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, g, r.member_id), TargetAssignmentMemberValue(
            r.assignment
        )
    if isinstance(r, ConsumerGroupCurrentAssignmentRecord):
        value = CurrentMemberAssignmentValue(
            r.member_epoch, r.previous_member_epoch, r.state, r.assigned, r.pending_revocation
        )
        return ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, g, r.member_id), value
    if isinstance(r, ConsumerGroupRegexRecord):
        value_16 = RegularExpressionValue(r.topics, r.version, r.timestamp_ms)
        return ConsumerGroupKey(REGULAR_EXPRESSION, g, regex=r.regex), value_16
    if isinstance(r, ConsumerGroupPartitionMetadataRecord):
        topics = tuple(TopicMetadataValue(tid, name, n) for tid, name, n in r.topics)
        return ConsumerGroupKey(PARTITION_METADATA, g), PartitionMetadataValue(topics)
    raise TypeError(f"not a consumer-group record with a value: {r!r}")


def encode_consumer_record(record: ConsumerGroupRecord) -> tuple[bytes, bytes | None]:
    """(key, value) bytes of one consumer-group record; value None for a tombstone."""
    record_type = _TOMBSTONE_TYPES.get(type(record))
    if record_type is not None:
        key = ConsumerGroupKey(
            record_type, record.group_id, getattr(record, "member_id", None), getattr(record, "regex", None)
        )
        return encode_consumer_key(key), None
    key, value = _key_and_value(record)
    return encode_consumer_key(key), encode_consumer_value(value)


# -- bytes -> typed record ----------------------------------------------------------------------


def canonical(partitions: TopicPartitions) -> Assignment:
    """The coordinator's form of an assignment as written (any order, a topic maybe repeated)."""
    merged: dict[uuid.UUID, set[int]] = {}
    for topic_id, parts in partitions:
        merged.setdefault(topic_id, set()).update(parts)
    return to_assignment(merged)


def _tombstone(key: ConsumerGroupKey) -> ConsumerGroupRecord:
    g, member, t = key.group, key.member_id or "", key.record_type
    if t == MEMBER_METADATA:
        return ConsumerGroupMemberTombstone(g, member)
    if t == TARGET_ASSIGNMENT_MEMBER:
        return ConsumerGroupTargetAssignmentMemberTombstone(g, member)
    if t == CURRENT_MEMBER_ASSIGNMENT:
        return ConsumerGroupCurrentAssignmentTombstone(g, member)
    if t == REGULAR_EXPRESSION:
        return ConsumerGroupRegexTombstone(g, key.regex or "")
    if t == TARGET_ASSIGNMENT_METADATA:
        return ConsumerGroupTargetAssignmentMetadataTombstone(g)
    if t == PARTITION_METADATA:
        return ConsumerGroupPartitionMetadataTombstone(g)
    return ConsumerGroupMetadataTombstone(g)


def _member_record(key: ConsumerGroupKey, v: MemberMetadataValue) -> ConsumerGroupMemberRecord:
    classic = v.classic_member
    return ConsumerGroupMemberRecord(
        key.group,
        key.member_id or "",
        v.instance_id,
        v.rack_id,
        v.client_id,
        v.client_host,
        v.subscribed_topic_names,
        v.subscribed_topic_regex,
        v.rebalance_timeout_ms,
        v.server_assignor,
        None
        if classic is None
        else ClassicMemberMetadata(classic.session_timeout_ms, classic.supported_protocols),
    )


def _record(key: ConsumerGroupKey, v: ConsumerValue) -> ConsumerGroupRecord:
    g, member = key.group, key.member_id or ""
    if isinstance(v, GroupMetadataValue):
        return ConsumerGroupMetadataRecord(g, v.epoch, v.metadata_hash)
    if isinstance(v, MemberMetadataValue):
        return _member_record(key, v)
    if isinstance(v, TargetAssignmentMetadataValue):
        return ConsumerGroupTargetAssignmentMetadataRecord(g, v.assignment_epoch, v.assignment_timestamp_ms)
    if isinstance(v, TargetAssignmentMemberValue):
        return ConsumerGroupTargetAssignmentMemberRecord(g, member, canonical(v.topic_partitions))
    if isinstance(v, CurrentMemberAssignmentValue):
        return ConsumerGroupCurrentAssignmentRecord(
            g,
            member,
            v.member_epoch,
            v.previous_member_epoch,
            v.state,
            canonical(v.assigned_partitions),
            canonical(v.partitions_pending_revocation),
        )
    if isinstance(v, RegularExpressionValue):
        return ConsumerGroupRegexRecord(g, key.regex or "", v.topics, v.version, v.timestamp)
    topics = tuple((t.topic_id, t.name, t.num_partitions) for t in v.topics)
    return ConsumerGroupPartitionMetadataRecord(g, topics)


def decode_consumer_record(key: ConsumerGroupKey, raw_value: bytes | None) -> ConsumerGroupRecord:
    """The typed record of a consumer-group key and value (a tombstone for a null value); raises
    `RecordFormatError` for bytes that are not a valid value of the key's type."""
    if raw_value is None:
        return _tombstone(key)
    return _record(key, decode_consumer_value(key.record_type, raw_value))
