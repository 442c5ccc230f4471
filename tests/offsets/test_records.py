"""Byte-level tests of the `__consumer_offsets` formats and the Java hash partition mapping."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkito.broker.log.batch import parse_header
from kafkito.broker.offsets.batches import batch_records, build_batch
from kafkito.broker.offsets.latest_values import fold_records
from kafkito.broker.offsets.partitioner import java_abs, java_string_hash, partition_for
from kafkito.broker.offsets.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetValue,
    RecordFormatError,
    UnknownKey,
    decode_group_value,
    decode_key,
    decode_offset_key,
    decode_offset_value,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
)


def s16(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def by_hand_hash(text: str) -> int:
    """s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, as Java's String.hashCode documents."""
    units = struct.unpack(
        f">{len(text.encode('utf-16-be', 'surrogatepass')) // 2}H", text.encode("utf-16-be", "surrogatepass")
    )
    n = len(units)
    total = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


# -- the partition mapping --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "java_hash"),
    [
        ("", 0),
        ("a", 97),
        ("ab", 97 * 31 + 98),
        ("hello", 99162322),  # the classic example: "hello".hashCode()
        ("polygenelubricants", -(2**31)),  # hashes to Integer.MIN_VALUE
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # one code point, two UTF-16 units
        ("consumer-group-émoji", by_hand_hash("consumer-group-émoji")),
    ],
)
def test_java_string_hash_matches_javas(group: str, java_hash: int) -> None:
    assert java_string_hash(group) == java_hash == by_hand_hash(group)


def test_known_group_partitions() -> None:
    assert partition_for("hello", 50) == 99162322 % 50 == 22
    assert partition_for("a", 50) == 97 % 50
    # Utils.abs(Integer.MIN_VALUE) is 0, not MIN_VALUE (Math.abs) and not 2^31.
    assert java_abs(-(2**31)) == 0
    assert partition_for("polygenelubricants", 50) == 0
    negative = "aaaaaaaaaaaaaaaaaaaaaaaa"
    assert java_string_hash(negative) < 0
    assert partition_for(negative, 50) == abs(by_hand_hash(negative)) % 50


@given(st.text(max_size=40), st.integers(min_value=1, max_value=200))
def test_partition_is_abs_hash_mod_n(group: str, n: int) -> None:
    h = by_hand_hash(group)
    assert partition_for(group, n) == (0 if h == -(2**31) else abs(h)) % n


# -- keys ---------------------------------------------------------------------------------------


def test_offset_commit_key_v1_bytes() -> None:
    raw = encode_offset_key("grp", "topic", 7)
    assert raw == b"\x00\x01" + s16("grp") + s16("topic") + b"\x00\x00\x00\x07"
    assert decode_key(raw) == OffsetKey("grp", "topic", 7)


def test_offset_commit_key_v0_reads_like_v1() -> None:
    assert decode_key(b"\x00\x00" + s16("g") + s16("t") + b"\x00\x00\x00\x01") == OffsetKey("g", "t", 1)


def test_group_metadata_key_v2_bytes() -> None:
    raw = encode_group_key("grp")
    assert raw == b"\x00\x02" + s16("grp")
    assert decode_key(raw) == GroupKey("grp")


def test_unknown_key_versions_are_reported_not_failed() -> None:
    # Share (9-15) and streams (17+) group records; 3-8 and 16 are consumer groups' (test_consumer_records).
    assert decode_key(b"\x00\x09" + s16("g")) == UnknownKey(9)
    assert decode_key(b"\x00\x11" + s16("g")) == UnknownKey(17)


def test_truncated_or_padded_keys_are_errors() -> None:
    with pytest.raises(RecordFormatError):
        decode_key(b"\x00\x01" + s16("g") + b"\x00\x05t")
    with pytest.raises(RecordFormatError):
        decode_key(encode_group_key("g") + b"\x00")


# -- offset values ------------------------------------------------------------------------------


def test_offset_value_v3_bytes() -> None:
    raw = encode_offset_value(OffsetValue(42, "meta", 1_700_000_000_000, leader_epoch=5))
    assert raw == (
        b"\x00\x03"
        + struct.pack(">q", 42)
        + struct.pack(">i", 5)
        + s16("meta")
        + struct.pack(">q", 1_700_000_000_000)
    )
    assert decode_offset_value(raw) == OffsetValue(42, "meta", 1_700_000_000_000, 5)


def test_offset_value_with_explicit_expiry_is_v1() -> None:
    value = OffsetValue(42, "", 1_000, leader_epoch=9, expire_timestamp=5_000)
    raw = encode_offset_value(value)
    assert raw == b"\x00\x01" + struct.pack(">q", 42) + s16("") + struct.pack(">qq", 1_000, 5_000)
    # v1 has no leader epoch: it reads back as -1.
    assert decode_offset_value(raw) == OffsetValue(42, "", 1_000, -1, 5_000)


def test_offset_value_v0_and_v2_have_no_epoch_nor_expiry() -> None:
    body = struct.pack(">q", 3) + s16("m") + struct.pack(">q", 77)
    for version in (0, 2):
        assert decode_offset_value(struct.pack(">h", version) + body) == OffsetValue(3, "m", 77, -1, None)


def test_offset_value_v4_flexible() -> None:
    # offset, leader epoch, compact string "ab" (length + 1), commit timestamp, no tagged fields
    raw = b"\x00\x04" + struct.pack(">qi", 10, 2) + b"\x03ab" + struct.pack(">q", 99) + b"\x00"
    assert decode_offset_value(raw) == OffsetValue(10, "ab", 99, 2)


def test_unknown_offset_value_version_is_an_error() -> None:
    with pytest.raises(RecordFormatError):
        decode_offset_value(b"\x00\x09" + b"\x00" * 30)


# -- group values -------------------------------------------------------------------------------

MEMBER = MemberValue("m-1", "inst", "client", "/127.0.0.1", 30_000, 10_000, b"\x00sub", b"\x00asg")


def test_group_value_v3_bytes() -> None:
    value = GroupValue("consumer", 3, "range", "m-1", (MEMBER,), 1_700_000_000_000)
    raw = encode_group_value(value)
    assert raw == (
        b"\x00\x03"
        + s16("consumer")
        + struct.pack(">i", 3)
        + s16("range")
        + s16("m-1")
        + struct.pack(">q", 1_700_000_000_000)
        + struct.pack(">i", 1)
        + s16("m-1")
        + s16("inst")
        + s16("client")
        + s16("/127.0.0.1")
        + struct.pack(">ii", 30_000, 10_000)
        + struct.pack(">i", 4)
        + b"\x00sub"
        + struct.pack(">i", 4)
        + b"\x00asg"
    )
    assert decode_group_value(raw) == value


def test_empty_group_value_has_null_protocol_and_leader() -> None:
    value = GroupValue("consumer", 4, None, None, (), 5)
    raw = encode_group_value(value)
    assert raw == b"\x00\x03" + s16("consumer") + struct.pack(">i", 4) + b"\xff\xff\xff\xff" + struct.pack(
        ">qi", 5, 0
    )
    assert decode_group_value(raw) == value


def test_group_value_v0_uses_session_timeout_as_rebalance_timeout() -> None:
    raw = (
        b"\x00\x00"
        + s16("consumer")
        + struct.pack(">i", 1)
        + s16("range")
        + s16("m")
        + struct.pack(">i", 1)
        + s16("m")
        + s16("c")
        + s16("h")
        + struct.pack(">i", 6000)
        + struct.pack(">i", 1)
        + b"s"
        + struct.pack(">i", 1)
        + b"a"
    )
    assert decode_group_value(raw) == GroupValue(
        "consumer", 1, "range", "m", (MemberValue("m", None, "c", "h", 6000, 6000, b"s", b"a"),), -1
    )


def test_group_value_v1_and_v2_add_rebalance_timeout_then_state_timestamp() -> None:
    member = s16("m") + s16("c") + s16("h") + struct.pack(">ii", 9000, 6000)
    member += struct.pack(">i", 0) + struct.pack(">i", -1)  # empty subscription, null assignment
    head = s16("") + struct.pack(">i", 2) + s16("p") + b"\xff\xff"
    v1 = b"\x00\x01" + head + struct.pack(">i", 1) + member
    v2 = b"\x00\x02" + head + struct.pack(">q", 123) + struct.pack(">i", 1) + member
    expected = MemberValue("m", None, "c", "h", 9000, 6000, b"", b"")
    assert decode_group_value(v1) == GroupValue("", 2, "p", None, (expected,), -1)
    assert decode_group_value(v2) == GroupValue("", 2, "p", None, (expected,), 123)


def test_group_value_v4_flexible() -> None:
    member = (
        b"\x02m"
        + b"\x00"
        + b"\x02c"
        + b"\x02h"
        + struct.pack(">ii", 9000, 6000)
        + b"\x02s"
        + b"\x02a"
        + b"\x00"
    )
    raw = (
        b"\x00\x04"
        + b"\x09consumer"
        + struct.pack(">i", 7)
        + b"\x06range"
        + b"\x02m"
        + struct.pack(">q", 55)
        + b"\x02"
        + member
        + b"\x01\x05\x02zz"  # one unknown tagged field
    )
    assert decode_group_value(raw) == GroupValue(
        "consumer", 7, "range", "m", (MemberValue("m", None, "c", "h", 9000, 6000, b"s", b"a"),), 55
    )


names = st.text(max_size=20)


@given(
    st.integers(min_value=-1, max_value=2**63 - 1),
    names,
    st.integers(min_value=0, max_value=2**62),
    st.integers(min_value=-1, max_value=2**31 - 1),
    st.none() | st.integers(min_value=0, max_value=2**62),
)
def test_offset_values_round_trip(offset: int, meta: str, ts: int, epoch: int, expire: int | None) -> None:
    value = OffsetValue(offset, meta, ts, epoch if expire is None else -1, expire)
    assert decode_offset_value(encode_offset_value(value)) == value


@given(
    names,
    st.integers(min_value=0, max_value=2**31 - 1),
    st.none() | names,
    st.lists(st.tuples(names, st.none() | names, st.binary(max_size=30), st.binary(max_size=30)), max_size=4),
)
def test_group_values_round_trip(
    protocol_type: str,
    generation: int,
    protocol: str | None,
    members: list[tuple[str, str | None, bytes, bytes]],
) -> None:
    value = GroupValue(
        protocol_type,
        generation,
        protocol,
        members[0][0] if members else None,
        tuple(MemberValue(m, i, "cid", "/h", 1, 2, sub, asg) for m, i, sub, asg in members),
        17,
    )
    assert decode_group_value(encode_group_value(value)) == value


# -- batches ------------------------------------------------------------------------------------


def test_batch_matches_kafka_record_builder_and_parses_back() -> None:
    records = [
        (encode_offset_key("g", "t", 0), encode_offset_value(OffsetValue(1, "", 5))),
        (encode_group_key("g"), None),
    ]
    ours = bytes(build_batch(records, 1_700_000_000_000))
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    for i, (key, value) in enumerate(records):
        builder.append(i, 1_700_000_000_000, key, value, [])
    theirs = bytearray(builder.build())
    struct.pack_into(">i", theirs, 12, -1)  # partition leader epoch: the log stamps it anyway
    assert ours == bytes(theirs)
    batch = DefaultRecordBatch(ours)
    assert batch.validate_crc()
    assert [(r.key, r.value) for r in batch] == records
    header = parse_header(ours)
    assert [(r.key, r.value) for r in batch_records(ours, header)] == records


def test_batch_records_reads_compressed_batches_too() -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=1,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    builder.append(0, 10, b"k" * 300, b"v" * 300, [])
    builder.append(1, 11, b"k2", None, [])
    raw = bytes(builder.build())
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch_records(raw, parse_header(raw))] == [
        (0, 10, b"k" * 300, b"v" * 300),
        (1, 11, b"k2", None),
    ]


@given(
    st.lists(
        st.tuples(st.binary(min_size=1, max_size=300), st.none() | st.binary(max_size=300)),
        min_size=1,
        max_size=40,
    )
)
def test_built_batches_parse_back(records: list[tuple[bytes, bytes | None]]) -> None:
    raw = bytes(build_batch(records, 123))
    assert DefaultRecordBatch(raw).validate_crc()
    assert [(r.key, r.value) for r in batch_records(raw, parse_header(raw))] == records


@given(names, names, st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_fast_offset_key_reader_agrees_with_the_general_one(group: str, topic: str, partition: int) -> None:
    raw = encode_offset_key(group, topic, partition)
    assert decode_offset_key(raw) == (group, topic, partition)
    assert decode_key(raw) == OffsetKey(group, topic, partition)
    assert decode_offset_key(encode_group_key(group)) is None
    with pytest.raises(RecordFormatError):
        decode_offset_key(raw + b"\x00")


@given(
    st.lists(
        st.tuples(st.binary(min_size=1, max_size=300), st.none() | st.binary(max_size=300)),
        min_size=1,
        max_size=80,
    )
)
def test_the_reload_reads_what_batch_records_reads(records: list[tuple[bytes, bytes | None]]) -> None:
    raw = bytes(build_batch(records, 5))
    latest: dict[bytes, bytes | None] = {}
    fold_records(raw, len(records), latest)
    assert latest == dict(records)  # the last value of each key
