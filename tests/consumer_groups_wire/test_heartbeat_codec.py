"""The ConsumerGroupHeartbeat handler reads its request body and packs its response itself (a hot path):
it must read what the codec (decode and null check) reads from any body, and write the bytes the
schema encodes for the same answer, at both versions."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult
from kafkito.broker.handlers.consumer_group_heartbeat import decode, encode_body
from kafkito.protocol.codec import (
    RESPONSES,
    MalformedRequest,
    RequestHeader,
    build_request,
    build_response,
    decode_request,
)
from kafkito.protocol.errors import ErrorCode
from kafkito.protocol.primitives import uvarint

assignments = st.none() | st.lists(
    st.tuples(st.uuids(), st.lists(st.integers(0, 2**31 - 1), max_size=40).map(tuple)), max_size=6
).map(tuple)
results = st.builds(
    ConsumerHeartbeatResult,
    error=st.sampled_from([ErrorCode.NONE, ErrorCode.NONE, *ErrorCode]),
    error_message=st.none() | st.text(max_size=60),
    member_id=st.none() | st.text(max_size=40),
    member_epoch=st.integers(-(2**31), 2**31 - 1),
    heartbeat_interval_ms=st.integers(0, 2**31 - 1),
    assignment=assignments,
)


def codec_body(result: ConsumerHeartbeatResult, version: int) -> bytes:
    """What the schema encodes, with an error answered as Kafka does: code and message only."""
    ok = result.error == ErrorCode.NONE
    assignment = None
    if ok and result.assignment is not None:
        assignment = dict(
            topic_partitions=[dict(topic_id=t, partitions=list(p)) for t, p in result.assignment]
        )
    response = build_response(
        68,
        version,
        throttle_time_ms=0,
        error_code=result.error,
        error_message=result.error_message,
        member_id=result.member_id if ok else None,
        member_epoch=result.member_epoch if ok else 0,
        heartbeat_interval_ms=result.heartbeat_interval_ms if ok else 0,
        assignment=assignment,
    )
    return bytes(response.encode())


@given(results, st.sampled_from([0, 1]))
def test_hand_encoded_body_is_the_codecs(result: ConsumerHeartbeatResult, version: int) -> None:
    body = encode_body(result)
    assert body == codec_body(result, version)
    decoded = RESPONSES[68].decode(body, version=version)
    assert decoded.error_code == result.error


def test_an_error_answer_has_no_member_epoch_or_assignment() -> None:
    fenced = ConsumerHeartbeatResult(
        ErrorCode.FENCED_MEMBER_EPOCH, "fenced", "m", 7, 5000, ((uuid.uuid4(), (1,)),)
    )
    decoded = RESPONSES[68].decode(encode_body(fenced), version=1)
    assert (decoded.error_code, decoded.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, "fenced")
    assert (decoded.member_id, decoded.member_epoch, decoded.heartbeat_interval_ms) == (None, 0, 0)
    assert decoded.assignment is None


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)
# Sometimes long enough that a compact length takes a multi-byte varint.
_string = st.none() | _text | st.builds(lambda s, n: s * n, _text, st.integers(1, 30))
_tags = st.lists(st.tuples(st.integers(0, 2**20), st.binary(max_size=20)), max_size=2)


def _cstr(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode()
    return uvarint(len(raw) + 1) + raw


def _tag_section(tags: list[tuple[int, bytes]]) -> bytes:
    return uvarint(len(tags)) + b"".join(uvarint(t) + uvarint(len(v)) + v for t, v in tags)


def _array(items: list[bytes] | None) -> bytes:
    return b"\x00" if items is None else uvarint(len(items) + 1) + b"".join(items)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[int, bytes]:
    """A request body as a client may write it, nulls (allowed or not) and unknown tagged fields too."""
    version = draw(st.sampled_from([0, 1]))
    names = draw(st.none() | st.lists(_string, max_size=4))
    owned = draw(
        st.none()
        | st.lists(
            st.tuples(st.uuids(), st.none() | st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6), _tags),
            max_size=3,
        )
    )
    int32 = st.integers(-(2**31), 2**31 - 1).map(lambda v: struct.pack(">i", v))
    body = (
        _cstr(draw(_string)) + _cstr(draw(_string)) + draw(int32)
        + _cstr(draw(_string)) + _cstr(draw(_string)) + draw(int32)
        + _array(None if names is None else [_cstr(n) for n in names])
        + (_cstr(draw(_string)) if version >= 1 else b"")
        + _cstr(draw(_string))
        + _array(None if owned is None else [
            t.bytes + _array(None if p is None else [struct.pack(">i", x) for x in p]) + _tag_section(tags)
            for t, p, tags in owned
        ])
        + _tag_section(draw(_tags))
    )  # fmt: skip
    return version, body


def reference(body: bytes, version: int) -> tuple[Any, ...]:
    """What the codec gives (kafka-python's decode, then the null check), as the decoder's fields."""
    frame = b"\x00" * 3 + body
    request = decode_request(frame, RequestHeader(68, version, 1, None, 3))
    names = request.subscribed_topic_names
    owned = request.topic_partitions
    return (
        request.group_id, request.member_id, request.member_epoch, request.instance_id, request.rack_id,
        request.rebalance_timeout_ms, None if names is None else tuple(names),
        request.subscribed_topic_regex if version >= 1 else None, request.server_assignor,
        None if owned is None else tuple((t.topic_id, tuple(t.partitions)) for t in owned),
    )  # fmt: skip


def _both(body: bytes, version: int) -> tuple[Any, Any]:
    results: list[Any] = []
    for read in (lambda: reference(body, version), lambda: tuple(decode(b"\x00\x00" + body, 2, version))):
        try:
            results.append(read())
        except MalformedRequest as exc:
            results.append(exc)
    return results[0], results[1]


@settings(max_examples=500, deadline=None)
@given(bodies(), st.binary(max_size=6))
def test_bodies_decode_as_the_codec_decodes_them(case: tuple[int, bytes], trailing: bytes) -> None:
    version, body = case
    expected, decoded = _both(body + trailing, version)
    if isinstance(expected, MalformedRequest):
        assert isinstance(decoded, MalformedRequest), (
            f"the codec refused ({expected}), the decoder read {decoded}"
        )
    else:
        assert decoded == expected


@settings(max_examples=300, deadline=None)
@given(bodies(), st.data())
def test_truncated_bodies_are_refused(case: tuple[int, bytes], data: st.DataObject) -> None:
    version, body = case
    cut = data.draw(st.just(len(body) - 1) | st.integers(0, len(body) - 1))
    with pytest.raises(MalformedRequest):
        decode(body[:cut], 0, version)


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from([0, 1]), st.binary(max_size=60))
def test_arbitrary_bytes_decode_as_the_codec_or_are_refused(version: int, body: bytes) -> None:
    expected, decoded = _both(body, version)
    if not isinstance(decoded, MalformedRequest):  # refusing more than kafka-python is allowed:
        assert decoded == expected  # a field past the end of the frame, which it shortens silently


@pytest.mark.parametrize("version", [0, 1])
def test_a_clients_request_decodes(version: int) -> None:
    topic = uuid.uuid4()
    fields: dict[str, Any] = dict(
        group_id="g", member_id="m" * 300, member_epoch=3, instance_id="i", rack_id=None,
        rebalance_timeout_ms=300_000, subscribed_topic_names=["a", "b"], server_assignor="range",
        topic_partitions=[dict(topic_id=topic, partitions=[0, 5])],
    )  # fmt: skip
    if version >= 1:
        fields["subscribed_topic_regex"] = "x.*"
    body = bytes(build_request(68, version, **fields).encode())
    decoded = decode(body, 0, version)
    assert decoded == reference(body, version)
    assert decoded.owned_partitions == ((topic, (0, 5)),)
