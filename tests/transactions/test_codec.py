"""__transaction_state keys and values in Kafka's formats, and the partition of an id."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions.codec import (
    RecordFormatError,
    decode_key,
    decode_record,
    decode_value,
    encode_key,
    encode_record,
    encode_value,
    partition_for,
    value_version,
)
from kafkito.broker.transactions.metadata import TransactionMetadata, TransactionRecord, TransactionTombstone
from kafkito.broker.transactions.state import TxnState

ONGOING = TransactionMetadata(
    "t1",
    1000,
    2,
    60_000,
    TxnState.ONGOING,
    frozenset({TopicPartition("t", 0), TopicPartition("t", 1)}),
    last_update_ms=5,
    start_ms=3,
)


def test_key_v0_bytes() -> None:
    assert encode_key("txn") == bytes.fromhex("0000" + "0003" + "74786e")
    assert decode_key(encode_key("txn")) == "txn"
    assert decode_key(bytes.fromhex("0001" + "0003" + "74786e")) is None  # another record type


def test_value_v0_bytes_follow_the_schema() -> None:
    expected = (
        "0000"  # version 0
        "00000000000003e8"  # producer id 1000
        "0002"  # epoch
        "0000ea60"  # timeout 60000
        "01"  # Ongoing
        "00000001"  # one topic
        "000174"  # "t"
        "00000002"
        "00000000"
        "00000001"  # partitions 0, 1
        "0000000000000005"  # last update
        "0000000000000003"  # start
    )
    assert value_version(ONGOING) == 0
    assert encode_value(ONGOING).hex() == expected
    assert decode_value("t1", bytes.fromhex(expected)) == ONGOING


def test_value_v1_carries_the_tagged_fields() -> None:
    empty = TransactionMetadata(
        "t1",
        1000,
        0,
        60_000,
        TxnState.EMPTY,
        last_update_ms=5,
        previous_producer_id=7,
        client_transaction_version=2,
    )
    expected = (
        "0001"
        "00000000000003e8"
        "0000"
        "0000ea60"
        "00"
        "00"  # null partitions (compact)
        "0000000000000005"
        "ffffffffffffffff"
        "02"  # two tagged fields
        "00"
        "08"
        "0000000000000007"  # tag 0: previous producer id
        "02"
        "02"
        "0002"  # tag 2: client transaction version
    )
    assert value_version(empty) == 1
    assert encode_value(empty).hex() == expected
    assert decode_value("t1", bytes.fromhex(expected)) == empty


def test_v1_partitions_and_both_versions_round_trip() -> None:
    for version in (0, 1):
        assert decode_value("t1", encode_value(ONGOING, version)) == ONGOING
    flexible = encode_value(ONGOING, 1)
    assert flexible[:2] == b"\x00\x01"


def test_empty_is_written_with_null_partitions() -> None:
    empty = TransactionMetadata("t1", 5, 0, 1000, TxnState.EMPTY)
    raw = encode_value(empty)
    assert raw[17:21] == b"\xff\xff\xff\xff"
    with pytest.raises(ValueError):
        encode_value(replace(empty, partitions=frozenset({TopicPartition("t", 0)})))


def test_tombstones_and_records() -> None:
    assert encode_record(TransactionTombstone("x")) == (encode_key("x"), None)
    assert decode_record(encode_key("x"), None) == TransactionTombstone("x")
    key, value = encode_record(TransactionRecord(ONGOING))
    assert decode_record(key, value) == TransactionRecord(ONGOING)


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00",
        bytes.fromhex("0002") + b"\x00" * 30,  # unknown version
        encode_value(ONGOING)[:-1],  # truncated
        encode_value(ONGOING) + b"\x00",  # trailing bytes
        bytes.fromhex("0000000000000000000100000000000109ffffffff") + b"\x00" * 16,  # state 9
    ],
)
def test_bad_values_are_format_errors(raw: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_value("t1", raw)


def test_bad_key_is_a_format_error() -> None:
    with pytest.raises(RecordFormatError):
        decode_key(b"\x00\x00\x00\x09ab")


def test_partition_is_javas_string_hash() -> None:
    assert partition_for("hello", 50) == 99162322 % 50  # "hello".hashCode() == 99162322
    assert partition_for("polygenelubricants", 50) == 0  # hashCode() == Integer.MIN_VALUE
    assert partition_for("", 50) == 0


_partitions = st.frozensets(
    st.builds(TopicPartition, st.text(min_size=1, max_size=8), st.integers(0, 2**31 - 1))
)


@given(
    state=st.sampled_from(list(TxnState)),
    pid=st.integers(-1, 2**63 - 1),
    epoch=st.integers(-1, 32767),
    partitions=_partitions,
    previous=st.integers(-1, 2**63 - 1),
    client_version=st.integers(0, 2),
    version=st.sampled_from([None, 1]),
)
def test_values_round_trip(
    state: TxnState,
    pid: int,
    epoch: int,
    partitions: frozenset[TopicPartition],
    previous: int,
    client_version: int,
    version: int | None,
) -> None:
    meta = TransactionMetadata(
        "id",
        pid,
        epoch,
        1000,
        state,
        frozenset() if state is TxnState.EMPTY else partitions,
        last_update_ms=7,
        start_ms=-1,
        previous_producer_id=previous,
        client_transaction_version=client_version,
    )
    assert decode_value("id", encode_value(meta, version)) == meta
