"""The wire primitives read and write what kafka-python's helpers do, and reject cut or over-long input."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.schemas.fields.codecs.types import String, UnsignedVarInt32
from kafka.record.util import calc_crc32c, decode_varint, encode_varint

from kafkito.protocol.primitives import (
    WireFormatError,
    compact_string,
    crc32c,
    read_compact_string,
    read_string,
    read_uvarint,
    read_varint,
    skip_tagged_fields,
    uvarint,
    varint,
)

_int64 = st.integers(-(2**63), 2**63 - 1)
_uint32 = st.integers(0, 2**32 - 1)
_text = st.none() | st.text(max_size=300)


def _kafka_python_varint(value: int) -> bytes:
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


@given(_int64, st.binary(max_size=4))
def test_signed_varints_match_kafka_python(value: int, tail: bytes) -> None:
    encoded = varint(value)
    assert encoded == _kafka_python_varint(value)
    assert read_varint(b"\x07" + encoded + tail, 1) == (value, 1 + len(encoded))
    assert decode_varint(encoded + tail, 0) == (value, len(encoded))


@given(_uint32)
def test_unsigned_varints_match_kafka_python(value: int) -> None:
    encoded = uvarint(value)
    assert encoded == UnsignedVarInt32.encode(value)
    assert read_uvarint(encoded, 0) == (value, len(encoded))
    assert UnsignedVarInt32.decode(io.BytesIO(encoded)) == value


@given(_text, st.binary(max_size=4))
def test_compact_strings_match_kafka_python(text: str | None, tail: bytes) -> None:
    encoded = compact_string(text)
    assert encoded == String("utf-8").encode(text, compact=True)
    assert read_compact_string(encoded + tail, 0) == (text, len(encoded))


@given(st.text(max_size=300), st.binary(max_size=4))
def test_classic_strings_match_kafka_python(text: str, tail: bytes) -> None:
    encoded = String("utf-8").encode(text)
    assert read_string(encoded + tail, 0) == (text, len(encoded))
    assert read_string(b"\xff\xff" + tail, 0) == (None, 2)


@given(st.binary(max_size=2048))
def test_crc32c_matches_kafka_python(data: bytes) -> None:
    assert crc32c(data) == calc_crc32c(data) == crc32c(memoryview(data))


@given(st.text(max_size=300), st.data())
def test_a_cut_compact_string_is_a_wire_format_error(text: str, data: st.DataObject) -> None:
    encoded = compact_string(text)
    with pytest.raises(WireFormatError):
        read_compact_string(encoded[: data.draw(st.integers(0, len(encoded) - 1))], 0)


_varints = st.one_of(
    _uint32.map(lambda v: (read_uvarint, uvarint(v))), _int64.map(lambda v: (read_varint, varint(v)))
)


@given(_varints, st.data())
def test_a_cut_varint_is_a_wire_format_error(case: tuple[object, bytes], data: st.DataObject) -> None:
    reader, encoded = case
    with pytest.raises(WireFormatError):
        reader(encoded[: data.draw(st.integers(0, len(encoded) - 1))], 0)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("reader", "data"),
    [
        (read_uvarint, b"\x80\x80\x80\x80\x80\x01"),  # longer than 5 bytes
        (read_uvarint, b"\xff\xff\xff\xff\x7f"),  # over 32 bits
        (read_varint, b"\x80" * 10 + b"\x01"),  # longer than 10 bytes
        (read_uvarint, b"\x80"),
        (read_varint, b"\x80"),
        (read_compact_string, b"\x05ab"),  # 4 bytes announced, 2 there
        (read_compact_string, b"\x03\xff\xfe"),  # not UTF-8
        (read_string, b"\x00\x05ab"),
        (read_string, b"\x00"),
        (skip_tagged_fields, b"\x01\x00\x09abc"),  # a field past the end
    ],
)
def test_bad_input_is_a_wire_format_error(reader: object, data: bytes) -> None:
    with pytest.raises(WireFormatError):
        reader(data, 0)  # type: ignore[operator]


def test_skip_tagged_fields_returns_the_section_end() -> None:
    section = uvarint(2) + uvarint(0) + uvarint(3) + b"abc" + uvarint(300) + uvarint(0)
    assert skip_tagged_fields(section + b"rest", 0) == len(section)
    assert skip_tagged_fields(b"\x00", 0) == 1
