"""Byte-level tests of the KIP-848 consumer-group records of `__consumer_offsets` (types 3-8, 16).

The golden bytes are built by hand from Kafka's message schemas (group-coordinator's
ConsumerGroup*Key.json / *Value.json): a key is int16 record type + the fields in the classic
encoding (int16 string lengths); a value is int16 version 0 + the fields in the flexible encoding:
compact string = uvarint(len + 1) + UTF-8, compact array = uvarint(count + 1) + elements, uuid = 16
raw bytes, and every struct ends with its tagged section (uvarint count, then tag, size, bytes).
"""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkito.broker.offsets.consumer_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    REGULAR_EXPRESSION,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    VALUE_TYPES,
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
    decode_consumer_key,
    decode_consumer_value,
    encode_consumer_key,
    encode_consumer_value,
)
from kafkito.broker.offsets.records import RecordFormatError, decode_key

T1 = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
T2 = uuid.UUID("f0e0d0c0-b0a0-9080-7060-504030201000")


def s16(text: str) -> bytes:
    """A classic string: int16 big-endian length, UTF-8 bytes."""
    return struct.pack(">h", len(text.encode())) + text.encode()


def cs(text: str) -> bytes:
    """A compact string of fewer than 127 bytes: one byte of length + 1, UTF-8 bytes."""
    return bytes([len(text.encode()) + 1]) + text.encode()


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


# -- keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        (ConsumerGroupKey(GROUP_METADATA, "grp"), b"\x00\x03" + s16("grp")),
        (ConsumerGroupKey(PARTITION_METADATA, "grp"), b"\x00\x04" + s16("grp")),
        (ConsumerGroupKey(MEMBER_METADATA, "grp", member_id="m1"), b"\x00\x05" + s16("grp") + s16("m1")),
        (ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, "grp"), b"\x00\x06" + s16("grp")),
        (ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, "grp", "m1"), b"\x00\x07" + s16("grp") + s16("m1")),
        (ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, "grp", "m1"), b"\x00\x08" + s16("grp") + s16("m1")),
        (ConsumerGroupKey(REGULAR_EXPRESSION, "grp", regex="t.*"), b"\x00\x10" + s16("grp") + s16("t.*")),
    ],
)
def test_key_bytes(key: ConsumerGroupKey, raw: bytes) -> None:
    # int16 record type (the key's "version"), group id, then member id or regular expression.
    assert encode_consumer_key(key) == raw
    assert decode_consumer_key(raw) == key
    assert decode_key(raw) == key


def test_keys_missing_or_with_extra_fields_are_errors() -> None:
    with pytest.raises(RecordFormatError):
        encode_consumer_key(ConsumerGroupKey(MEMBER_METADATA, "g"))
    with pytest.raises(RecordFormatError):
        encode_consumer_key(ConsumerGroupKey(REGULAR_EXPRESSION, "g"))
    with pytest.raises(RecordFormatError):
        encode_consumer_key(ConsumerGroupKey(9, "g"))
    with pytest.raises(RecordFormatError):
        decode_key(b"\x00\x05" + s16("g"))  # no member id
    with pytest.raises(RecordFormatError):
        decode_key(b"\x00\x03" + s16("g") + b"\x00")  # a trailing byte


# -- values: golden bytes -----------------------------------------------------------------------


def test_group_metadata_value_bytes() -> None:
    # version 0, Epoch int32 42, empty tagged section.
    plain = b"\x00\x00" + i32(42) + b"\x00"
    assert encode_consumer_value(GroupMetadataValue(42)) == plain
    # Kafka 4.1: MetadataHash is tag 0, an int64, written when not 0: one tagged field, tag 0, size 8.
    hashed = b"\x00\x00" + i32(42) + b"\x01" + b"\x00\x08" + i64(-2)
    assert encode_consumer_value(GroupMetadataValue(42, -2)) == hashed
    assert decode_consumer_value(GROUP_METADATA, plain) == GroupMetadataValue(42)
    assert decode_consumer_value(GROUP_METADATA, hashed) == GroupMetadataValue(42, -2)
    # CreationTimeMs (tag 1, a later Kafka) is read; an unknown tag 7 is skipped.
    later = b"\x00\x00" + i32(42) + b"\x03" + b"\x00\x08" + i64(5) + b"\x01\x08" + i64(99) + b"\x07\x01z"
    assert decode_consumer_value(GROUP_METADATA, later) == GroupMetadataValue(42, 5, 99)


def test_member_metadata_value_bytes() -> None:
    value = MemberMetadataValue(None, "rack-a", "cid", "/10.0.0.1", ("t1", "t2"), None, 45000, "uniform")
    raw = (
        b"\x00\x00"  # version 0
        + b"\x00"  # InstanceId: null compact string
        + cs("rack-a")  # RackId
        + cs("cid")  # ClientId
        + cs("/10.0.0.1")  # ClientHost
        + b"\x03"  # SubscribedTopicNames: 2 elements, written as 3
        + cs("t1")
        + cs("t2")
        + b"\x00"  # SubscribedTopicRegex: null
        + i32(45000)  # RebalanceTimeoutMs
        + cs("uniform")  # ServerAssignor
        + b"\x00"  # no tagged fields: ClassicMemberMetadata is null
    )
    assert encode_consumer_value(value) == raw
    assert decode_consumer_value(MEMBER_METADATA, raw) == value


def test_member_metadata_value_with_classic_member_bytes() -> None:
    classic = ClassicMemberValue(10000, (("range", b"\x01\x02"),))
    value = MemberMetadataValue("inst", None, "c", "h", (), "^t.*", 300000, None, classic)
    struct_bytes = (
        b"\x01"  # a nullable struct in a tagged field starts with its presence, uvarint 1
        + i32(10000)  # SessionTimeoutMs
        + b"\x02"  # SupportedProtocols: one element
        + cs("range")  # Name
        + b"\x03\x01\x02"  # Metadata: compact bytes, 2 bytes written as 3
        + b"\x00"  # the protocol's tagged section
        + b"\x00"  # ClassicMemberMetadata's tagged section
    )
    assert len(struct_bytes) == 17  # 1 + 4 + 1 + 6 + 3 + 1 + 1
    raw = (
        b"\x00\x00"
        + cs("inst")
        + b"\x00"  # RackId null
        + cs("c")
        + cs("h")
        + b"\x01"  # SubscribedTopicNames: empty
        + cs("^t.*")
        + i32(300000)
        + b"\x00"  # ServerAssignor null
        + b"\x01"  # one tagged field
        + b"\x00"  # tag 0: ClassicMemberMetadata
        + b"\x11"  # its size: 17
        + struct_bytes
    )
    assert encode_consumer_value(value) == raw
    assert decode_consumer_value(MEMBER_METADATA, raw) == value


def test_target_assignment_metadata_value_bytes() -> None:
    raw = b"\x00\x00" + i32(7) + b"\x00"  # version, AssignmentEpoch, tagged section
    assert encode_consumer_value(TargetAssignmentMetadataValue(7)) == raw
    assert decode_consumer_value(TARGET_ASSIGNMENT_METADATA, raw) == TargetAssignmentMetadataValue(7)


def test_target_assignment_member_value_bytes() -> None:
    value = TargetAssignmentMemberValue(((T1, (0, 2)), (T2, ())))
    raw = (
        b"\x00\x00"
        + b"\x03"  # TopicPartitions: 2 elements
        + T1.bytes  # TopicId: 16 bytes
        + b"\x03"  # Partitions: compact int32 array of 2
        + i32(0)
        + i32(2)
        + b"\x00"  # the element's tagged section
        + T2.bytes
        + b"\x01"  # an empty partition list
        + b"\x00"
        + b"\x00"  # the value's tagged section
    )
    assert encode_consumer_value(value) == raw
    assert decode_consumer_value(TARGET_ASSIGNMENT_MEMBER, raw) == value


def test_current_member_assignment_value_bytes() -> None:
    value = CurrentMemberAssignmentValue(5, 4, 2, ((T1, (1,)),), ((T2, (3, 4)),))
    raw = (
        b"\x00\x00"
        + i32(5)  # MemberEpoch
        + i32(4)  # PreviousMemberEpoch
        + b"\x02"  # State: int8
        + b"\x02" + T1.bytes + b"\x02" + i32(1) + b"\x00"  # AssignedPartitions
        + b"\x02" + T2.bytes + b"\x03" + i32(3) + i32(4) + b"\x00"  # PartitionsPendingRevocation
        + b"\x00"
    )  # fmt: skip
    assert encode_consumer_value(value) == raw
    assert decode_consumer_value(CURRENT_MEMBER_ASSIGNMENT, raw) == value


def test_current_member_assignment_skips_later_kafkas_assignment_epochs() -> None:
    # A later Kafka (KIP-1251) adds AssignmentEpochs as tag 0 of each TopicPartitions element.
    raw = (
        b"\x00\x00" + i32(5) + i32(4) + b"\x00"
        + b"\x02" + T1.bytes + b"\x02" + i32(1) + b"\x01\x00\x05\x02" + i32(5)
        + b"\x01"
        + b"\x00"
    )  # fmt: skip
    assert decode_consumer_value(CURRENT_MEMBER_ASSIGNMENT, raw) == CurrentMemberAssignmentValue(
        5, 4, 0, ((T1, (1,)),), ()
    )


def test_regular_expression_value_bytes() -> None:
    value = RegularExpressionValue(("ta", "tb"), 12, 1_700_000_000_000)
    raw = b"\x00\x00" + b"\x03" + cs("ta") + cs("tb") + i64(12) + i64(1_700_000_000_000) + b"\x00"
    assert encode_consumer_value(value) == raw
    assert decode_consumer_value(REGULAR_EXPRESSION, raw) == value


def test_kafka_40_partition_metadata_value_bytes() -> None:
    # What Kafka 4.0 writes for a group subscribed to two topics (one with racks on its partitions).
    raw = (
        b"\x00\x00"
        + b"\x03"  # Topics: 2
        + T1.bytes + cs("orders") + i32(3)
        + b"\x01"  # PartitionMetadata: empty (no racks known)
        + b"\x00"  # the topic's tagged section
        + T2.bytes + cs("audit") + i32(1)
        + b"\x02"  # PartitionMetadata: one partition
        + i32(0) + b"\x03" + cs("r1") + cs("r2") + b"\x00"  # Partition 0 on racks r1, r2
        + b"\x00"
        + b"\x00"  # the value's tagged section
    )  # fmt: skip
    value = PartitionMetadataValue(
        (TopicMetadataValue(T1, "orders", 3), TopicMetadataValue(T2, "audit", 1, ((0, ("r1", "r2")),)))
    )
    assert decode_consumer_value(PARTITION_METADATA, raw) == value
    assert encode_consumer_value(value) == raw


def test_bad_values_are_errors() -> None:
    good = encode_consumer_value(TargetAssignmentMetadataValue(1))
    with pytest.raises(RecordFormatError):
        decode_consumer_value(TARGET_ASSIGNMENT_METADATA, good + b"\x00")  # trailing
    with pytest.raises(RecordFormatError):
        decode_consumer_value(TARGET_ASSIGNMENT_METADATA, good[:-2])  # truncated
    with pytest.raises(RecordFormatError):
        decode_consumer_value(TARGET_ASSIGNMENT_METADATA, b"\x00\x01" + good[2:])  # unknown version
    with pytest.raises(RecordFormatError):
        decode_consumer_value(2, good)  # not a consumer-group type
    with pytest.raises(RecordFormatError):  # a member value whose client id is null
        decode_consumer_value(MEMBER_METADATA, b"\x00\x00\x00\x00\x00")
    with pytest.raises(RecordFormatError):  # MetadataHash of 4 bytes
        decode_consumer_value(GROUP_METADATA, b"\x00\x00" + i32(1) + b"\x01\x00\x04" + i32(0))
    with pytest.raises(RecordFormatError):  # an array longer than the value
        decode_consumer_value(TARGET_ASSIGNMENT_MEMBER, b"\x00\x00\x7f\x00")


def test_null_classic_member_in_its_tagged_field_reads_as_none() -> None:
    # Kafka writes nothing for a null ClassicMemberMetadata; a presence of 0 also means null.
    head = b"\x00\x00\x00\x00" + cs("c") + cs("h") + b"\x01\x00" + i32(1) + b"\x00"
    value = decode_consumer_value(MEMBER_METADATA, head + b"\x01\x00\x01\x00")
    assert isinstance(value, MemberMetadataValue) and value.classic_member is None


# -- round trips --------------------------------------------------------------------------------

names = st.text(max_size=12)
opt_names = st.none() | names
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
uuids = st.uuids()
topic_partitions = st.lists(st.tuples(uuids, st.lists(int32, max_size=5).map(tuple)), max_size=4).map(tuple)

values: st.SearchStrategy[ConsumerValue] = st.one_of(
    st.builds(GroupMetadataValue, int32, int64, int64),
    st.builds(
        PartitionMetadataValue,
        st.lists(
            st.builds(
                TopicMetadataValue,
                uuids,
                names,
                int32,
                st.lists(st.tuples(int32, st.lists(names, max_size=3).map(tuple)), max_size=3).map(tuple),
            ),
            max_size=3,
        ).map(tuple),
    ),
    st.builds(
        MemberMetadataValue,
        opt_names,
        opt_names,
        names,
        names,
        st.lists(names, max_size=4).map(tuple),
        opt_names,
        int32,
        opt_names,
        st.none()
        | st.builds(
            ClassicMemberValue,
            int32,
            st.lists(st.tuples(names, st.binary(max_size=20)), max_size=3).map(tuple),
        ),
    ),
    st.builds(TargetAssignmentMetadataValue, int32, int64),
    st.builds(TargetAssignmentMemberValue, topic_partitions),
    st.builds(
        CurrentMemberAssignmentValue,
        int32,
        int32,
        st.integers(min_value=-128, max_value=127),
        topic_partitions,
        topic_partitions,
    ),
    st.builds(RegularExpressionValue, st.lists(names, max_size=4).map(tuple), int64, int64),
)


@given(values)
def test_every_value_round_trips(value: ConsumerValue) -> None:
    assert decode_consumer_value(VALUE_TYPES[type(value)], encode_consumer_value(value)) == value


@given(st.sampled_from(sorted(set(VALUE_TYPES.values()))), names, names)
def test_every_key_round_trips(record_type: int, group: str, second: str) -> None:
    member_keys = (MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT)
    member = second if record_type in member_keys else None
    regex = second if record_type == REGULAR_EXPRESSION else None
    key = ConsumerGroupKey(record_type, group, member, regex)
    assert decode_key(encode_consumer_key(key)) == key


@given(values, st.binary(min_size=1, max_size=8))
def test_values_with_bytes_appended_are_refused(value: ConsumerValue, extra: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_consumer_value(VALUE_TYPES[type(value)], encode_consumer_value(value) + extra)
