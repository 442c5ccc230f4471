"""The hand-written Heartbeat request decoder reads what kafka-python reads, at every version, and rejects
a null group_id or member_id as Kafka does (kafka-python's decode does not check nullability)."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.handlers import HANDLERS, heartbeat
from kafkito.protocol.codec import REQUESTS, MalformedRequest, build_request

VERSIONS = range(heartbeat.VERSIONS[0], heartbeat.VERSIONS[1] + 1)
_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
# Long enough, sometimes, that a compact string's length takes a multi-byte varint.
_string = st.none() | _text | st.builds(lambda s, n: s * n, _text, st.integers(1, 40))


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string_bytes(value: str | None, compact: bool) -> bytes:
    if value is None:
        return b"\x00" if compact else struct.pack(">h", -1)
    raw = value.encode()
    return _uvarint(len(raw) + 1) + raw if compact else struct.pack(">h", len(raw)) + raw


def encode_body(
    version: int,
    group_id: str | None,
    generation_id: int,
    member_id: str | None,
    instance_id: str | None,
    tags: list[tuple[int, bytes]],
) -> bytes:
    """A Heartbeat request body as a client would write it, with unknown tagged fields (v4)."""
    compact = version >= 4
    body = (
        _string_bytes(group_id, compact)
        + struct.pack(">i", generation_id)
        + _string_bytes(member_id, compact)
    )
    if version >= 3:
        body += _string_bytes(instance_id, compact)
    if compact:
        body += _uvarint(len(tags)) + b"".join(_uvarint(t) + _uvarint(len(v)) + v for t, v in tags)
    return body


@st.composite
def bodies(draw: st.DrawFn) -> tuple[int, bytes]:
    version = draw(st.sampled_from(VERSIONS))
    tags = draw(
        st.lists(st.tuples(st.integers(0, 2**31 - 1), st.binary(max_size=200)), max_size=3)
        if version >= 4
        else st.just([])
    )
    body = encode_body(
        version,
        draw(_string),
        draw(st.integers(-(2**31), 2**31 - 1)),
        draw(_string),
        draw(_string) if version >= 3 else None,
        tags,
    )
    return version, body


def _null_where_kafka_forbids(values: tuple[Any, ...]) -> bool:
    """group_id and member_id are not nullable in any version (Kafka's HeartbeatRequest.json)."""
    return values[0] is None or values[2] is None


def reference(body: bytes, version: int) -> tuple[Any, ...]:
    """What kafka-python decodes, as the fields the handler reads."""
    request = REQUESTS[heartbeat.API_KEY][version].decode(memoryview(body), version=version)
    instance = request.group_instance_id if version >= 3 else None
    return (request.group_id, request.generation_id, request.member_id, instance)


@settings(max_examples=500, deadline=None)
@given(bodies(), st.binary(max_size=12), st.binary(max_size=6))
def test_well_formed_bodies_decode_as_kafka_python_does(
    case: tuple[int, bytes], header: bytes, trailing: bytes
) -> None:
    version, body = case
    frame = header + body + trailing  # the decoder starts at the body's offset; trailing bytes are ignored
    expected = reference(body + trailing, version)
    if _null_where_kafka_forbids(expected):
        with pytest.raises(MalformedRequest, match="non-nullable"):
            heartbeat.decode(frame, len(header), version)
        return
    decoded = heartbeat.decode(frame, len(header), version)
    assert tuple(decoded) == expected


@settings(max_examples=500, deadline=None)
@given(bodies(), st.data())
def test_truncated_bodies_raise_malformed_request(case: tuple[int, bytes], data: st.DataObject) -> None:
    version, body = case
    cut = data.draw(st.just(len(body) - 1) | st.integers(0, len(body) - 1))  # one byte short, often
    with pytest.raises(MalformedRequest):
        heartbeat.decode(body[:cut], 0, version)


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(VERSIONS), st.binary(max_size=40))
def test_arbitrary_bytes_decode_as_kafka_python_or_raise_malformed_request(version: int, body: bytes) -> None:
    try:
        expected: Any = reference(body, version)
    except Exception as exc:  # kafka-python raises IndexError, struct.error, UnicodeDecodeError...
        expected = exc
    try:
        decoded = tuple(heartbeat.decode(body, 0, version))
    except MalformedRequest:
        return  # kafka-python raised too, read past the end of the frame (below), or read a forbidden null
    assert not isinstance(expected, Exception), f"kafka-python raised {expected!r}, the decoder did not"
    assert not _null_where_kafka_forbids(expected)
    assert decoded == expected


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_python_clients_requests_decode(version: int) -> None:
    request = build_request(
        heartbeat.API_KEY,
        version,
        group_id="g",
        generation_id=7,
        member_id="consumer-1-" + "x" * 200,
        group_instance_id="instance-1" if version >= 3 else None,
    )
    request.with_header(correlation_id=3, client_id="cid")
    frame = bytes(request.encode(header=True, framed=False))
    body = bytes(request.encode(header=False, framed=False))
    offset = len(frame) - len(body)
    instance = "instance-1" if version >= 3 else None
    assert tuple(heartbeat.decode(frame, offset, version)) == ("g", 7, "consumer-1-" + "x" * 200, instance)
    assert encode_body(version, "g", 7, "consumer-1-" + "x" * 200, instance, []) == body


@pytest.mark.parametrize("version", [0, 3])
def test_a_last_string_cut_short_is_malformed_where_kafka_python_shortens_it(version: int) -> None:
    body = encode_body(version, "g", 1, "member-1", "instance-1" if version >= 3 else None, [])
    cut = body[:-2]
    assert reference(cut, version)[2 if version < 3 else 3] in ("member", "instance")  # its silent quirk
    with pytest.raises(MalformedRequest):
        heartbeat.decode(cut, 0, version)


def test_an_unknown_tagged_field_cut_short_is_malformed() -> None:
    body = encode_body(4, "g", 1, "m", None, [(9, b"abcdef")])
    with pytest.raises(MalformedRequest):
        heartbeat.decode(body[:-1], 0, 4)


def test_invalid_utf8_is_malformed() -> None:
    with pytest.raises(MalformedRequest):
        heartbeat.decode(b"\x03\xff\xfe" + struct.pack(">i", 1) + b"\x02m\x00\x00", 0, 4)


@pytest.mark.parametrize("count", [b"\x80\x80\x80\x80\x80\x00", b"\x80\x80\x80\x80\x90\x00"])
def test_an_over_long_tagged_field_count_is_malformed(count: bytes) -> None:
    body = encode_body(4, "g", 1, "m", None, [])[:-1] + count
    with pytest.raises(Exception):  # noqa: B017  (kafka-python: ValueError from its varint reader)
        reference(body, 4)
    with pytest.raises(MalformedRequest):
        heartbeat.decode(body, 0, 4)


def test_a_handler_decode_is_its_own() -> None:
    """Dispatch takes a module's `decode` as its body reader: never a name it merely imported."""
    for handler in HANDLERS.values():
        decode = getattr(handler, "decode", None)
        assert decode is None or decode.__module__ == handler.__name__, handler.__name__


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("nulled", ["group_id", "member_id"])
def test_a_null_group_or_member_id_is_malformed(version: int, nulled: str) -> None:
    values = {"group_id": "g", "member_id": "m", nulled: None}
    body = encode_body(version, values["group_id"], 1, values["member_id"], None, [])
    with pytest.raises(MalformedRequest, match=f"non-nullable field {nulled}"):
        heartbeat.decode(body, 0, version)
