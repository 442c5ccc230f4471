"""The reload's fast readers agree with the general ones, byte for byte, on any input.

`LatestValues` (record layouts cached by batch shape) must keep exactly the last value per key
that a record-by-record read keeps, over sequences of batches that repeat shapes with other
contents, repeat a shape's size and count with another framing, carry null keys and values,
headers, and varints of several bytes. `CommitDecoder` must return exactly the record the general
decoder builds, or None where the general decoder is needed (other versions, malformed input).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkito.broker.coordinator.records import OffsetCommitRecord
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.broker.log.batch import parse_header
from kafkito.broker.offsets.batches import batch_records
from kafkito.broker.offsets.commit_decoder import CommitDecoder
from kafkito.broker.offsets.latest_values import MAX_LAYOUT_RECORDS, LatestValues
from kafkito.broker.offsets.records import (
    OffsetValue,
    RecordFormatError,
    decode_offset_key,
    decode_offset_value,
    encode_group_key,
    encode_offset_key,
    encode_offset_value,
)

# One record's shape: key length, value length (None: null), timestamp delta, offset step, headers
record_shapes = st.tuples(
    st.none() | st.integers(0, 130),
    st.none() | st.integers(0, 130),
    st.sampled_from([0, 1, 63, 64, 9_000, 2**40]),
    st.sampled_from([1, 1, 1, 64, 300]),
    st.integers(0, 2),
)
batch_shapes = st.lists(record_shapes, min_size=1, max_size=8)
RecordShape = tuple[int | None, int | None, int, int, int]


def build(shape: Sequence[RecordShape], fill: int) -> bytes:
    """A batch of `shape`, its key and value bytes drawn from `fill` (same shape, other contents)."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    offset = 0
    for i, (key_len, value_len, ts_delta, step, headers) in enumerate(shape):
        key = None if key_len is None else bytes((fill + i + j) % 4 for j in range(key_len))
        value = None if value_len is None else bytes((fill * 7 + j) % 256 for j in range(value_len))
        builder.append(offset, 1_000 + ts_delta, key, value, [("h", b"x" * n) for n in range(headers)])
        offset += step
    return bytes(builder.build())


def read_back(batches: list[bytes]) -> dict[bytes, bytes | None]:
    """What a record-by-record read keeps: the last value per key, records without a key skipped."""
    latest: dict[bytes, bytes | None] = {}
    for raw in batches:
        for r in batch_records(raw, parse_header(raw)):
            if r.key is not None:
                latest[r.key] = r.value
    return latest


def fold(batches: list[bytes]) -> dict[bytes, bytes | None]:
    reader = LatestValues()
    latest: dict[bytes, bytes | None] = {}
    for raw in batches:
        reader.take(raw, parse_header(raw).record_count, latest)
    return latest


@settings(max_examples=300)
@given(
    st.lists(batch_shapes, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.booleans()), min_size=1, max_size=30),
)
def test_layouts_keep_what_a_record_by_record_read_keeps(
    shapes: list[list[RecordShape]], picks: list[tuple[int, int, bool]]
) -> None:
    batches = []
    for index, fill, reverse in picks:
        shape = shapes[index % len(shapes)]
        # reversed: the same size and record count, mostly with another framing
        batches.append(build(shape[::-1] if reverse else shape, fill))
    assert list(fold(batches).items()) == list(read_back(batches).items())


def test_a_repeated_shape_with_other_keys_and_framing_is_read_right() -> None:
    a: list[RecordShape] = [(3, 5, 0, 1, 0), (4, 4, 0, 1, 0)]
    b = a[::-1]  # same size and count, other framing
    batches = [build(a, 0), build(a, 1), build(a, 2), build(b, 3), build(a, 4), build(b, 5), build(b, 6)]
    assert len({len(x) for x in batches}) == 1
    assert fold(batches) == read_back(batches)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3, 5, 0, 1, 0), (3, 2, 0, 1, 1)),  # a shorter value, a header of 3 bytes makes up for it
        ((3, 0, 0, 1, 0), (3, None, 0, 1, 0)),  # an empty value and a tombstone: one byte each
        ((0, 4, 0, 1, 0), (None, 4, 0, 1, 0)),  # an empty key and no key
        ((5, 0, 0, 1, 0), (4, 1, 0, 1, 0)),  # a byte moved from key to value
        ((4, 3, 0, 1, 0), (3, 3, 64, 1, 0)),  # the timestamp delta's varint grows, the key shrinks
        ((4, 3, 0, 64, 0), (2, 3, 0, 1, 1)),  # the next offset delta's varint grows, or the headers
    ],
)
def test_a_shape_of_the_same_size_and_count_with_other_framing_is_read_right(
    a: RecordShape, b: RecordShape
) -> None:
    edge: RecordShape = (2, 2, 0, 1, 0)
    one, other = [edge, a, edge], [edge, b, edge]
    assert len(build(one, 0)) == len(build(other, 0))
    for order in ([one, one, one, other, other, one], [one, other, one, other, other, other, one]):
        batches = [build(shape, fill) for fill, shape in enumerate(order)]
        assert list(fold(batches).items()) == list(read_back(batches).items())


def test_a_batch_of_the_same_size_with_more_records_is_read_right() -> None:
    two: list[RecordShape] = [(10, 10, 0, 1, 0)] * 2
    three: list[RecordShape] = [(5, 6, 0, 1, 0)] * 3
    assert len(build(two, 0)) == len(build(three, 0))
    batches = [build(two, 0), build(two, 1), build(three, 2), build(two, 3), build(three, 4), build(three, 5)]
    assert list(fold(batches).items()) == list(read_back(batches).items())


def test_layouts_stop_at_their_budget_and_reading_goes_on() -> None:
    shape: list[RecordShape] = [(10, 10, 0, 1, 0)] * 50
    batches = [build(shape[: 2 + i % 40], i) for i in range(3 * MAX_LAYOUT_RECORDS // 50)]
    batches += [build(shape, fill) for fill in range(5)]
    assert fold(batches) == read_back(batches)


# -- offset commit records ----------------------------------------------------------------------

names = st.text(max_size=20)
values = st.builds(
    OffsetValue,
    st.integers(-1, 2**63 - 1),
    st.text(max_size=40),
    st.integers(0, 2**50),
    st.integers(-1, 2**31 - 1),
    st.none() | st.integers(0, 2**50),
)


def general(key: bytes, value: bytes) -> OffsetCommitRecord | None:
    """The record the general decoders build (the loader's path for every other record), or None
    where they find no offset commit or raise."""
    try:
        parsed = decode_offset_key(key)
        if parsed is None:
            return None
        v = decode_offset_value(value)
    except RecordFormatError:
        return None
    offset = OffsetAndMetadata(v.offset, v.metadata, v.leader_epoch, v.commit_timestamp, v.expire_timestamp)
    return OffsetCommitRecord(parsed[0], TopicPartition(parsed[1], parsed[2]), offset)


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["g", "group-1", "group-12", "é"]) | names,
            st.sampled_from(["events", "t"]) | names,
            st.integers(-(2**31), 2**31 - 1),
            values,
            st.sampled_from(["none", "none", "truncate", "flip", "group key", "version"]),
            st.integers(0, 200),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_the_commit_decoder_builds_what_the_general_decoder_builds(
    entries: list[tuple[str, str, int, OffsetValue, str, int]],
) -> None:
    decoder = CommitDecoder()
    for group, topic, partition, value, damage, at in entries:
        key, raw = encode_offset_key(group, topic, partition), encode_offset_value(value)
        if damage == "truncate":
            key, raw = (key[: at % len(key)], raw) if at % 2 else (key, raw[: at % len(raw)])
        elif damage == "flip":
            target = bytearray(key if at % 2 else raw)
            target[at % len(target)] ^= 0x80 | at
            key, raw = (bytes(target), raw) if at % 2 else (key, bytes(target))
        elif damage == "group key":
            key = encode_group_key(group)
        elif damage == "version":
            raw = struct.pack(">h", at % 6) + raw[2:]
        fast = decoder.decode(key, raw)
        if fast is not None:
            assert fast == general(key, raw)
            assert type(fast.partition) is TopicPartition and type(fast.offset) is OffsetAndMetadata
        elif damage == "none" and value.expire_timestamp is None:
            raise AssertionError("the common form fell back to the general decoder")


def test_the_commit_decoder_shares_group_ids_and_partitions() -> None:
    decoder = CommitDecoder()
    raw = encode_offset_value(OffsetValue(5, "", 10, 1))
    first = decoder.decode(encode_offset_key("group", "t", 0), raw)
    second = decoder.decode(encode_offset_key("group", "t", 1), raw)
    again = decoder.decode(encode_offset_key("other", "t", 0), raw)
    assert first is not None and second is not None and again is not None
    assert first.group_id is second.group_id
    assert again.partition is first.partition and again.group_id == "other"
