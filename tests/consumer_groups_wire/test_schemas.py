"""The ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69) schemas against bytes laid out by hand
from Kafka's wire format (compact strings and arrays, uuids, tagged-field sections), every version."""

from __future__ import annotations

import struct
import uuid

import pytest

from kafkito.protocol.codec import REQUESTS, build_request, build_response, is_flexible
from kafkito.protocol.primitives import uvarint

TOPIC = uuid.UUID("6f1c1e52-8d0e-4a43-9a57-1d2f3c4b5a69")
NO_TAGS = b"\x00"


def cstr(value: str | None) -> bytes:
    """A COMPACT_(NULLABLE_)STRING."""
    if value is None:
        return b"\x00"
    raw = value.encode()
    return uvarint(len(raw) + 1) + raw


def carray(items: list[bytes] | None) -> bytes:
    """A COMPACT_(NULLABLE_)ARRAY of already encoded items."""
    if items is None:
        return b"\x00"
    return uvarint(len(items) + 1) + b"".join(items)


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def heartbeat_request_bytes(version: int, regex: str | None) -> bytes:
    owned = carray([TOPIC.bytes + carray([i32(0), i32(2)]) + NO_TAGS])
    return (
        cstr("group")
        + cstr("member-1")
        + i32(3)
        + cstr("static-1")
        + cstr(None)
        + i32(45_000)
        + carray([cstr("orders"), cstr("payments")])
        + (cstr(regex) if version >= 1 else b"")
        + cstr("uniform")
        + owned
        + NO_TAGS
    )


@pytest.mark.parametrize("version", [0, 1])
def test_heartbeat_request_decodes_from_kafka_bytes(version: int) -> None:
    assert is_flexible(68, version)
    regex = "pay.*" if version >= 1 else None
    request = REQUESTS[68].decode(heartbeat_request_bytes(version, regex), version=version)
    assert request.group_id == "group"
    assert request.member_id == "member-1"
    assert request.member_epoch == 3
    assert request.instance_id == "static-1"
    assert request.rack_id is None
    assert request.rebalance_timeout_ms == 45_000
    assert list(request.subscribed_topic_names) == ["orders", "payments"]
    assert request.server_assignor == "uniform"
    assert [(t.topic_id, list(t.partitions)) for t in request.topic_partitions] == [(TOPIC, [0, 2])]
    if version >= 1:
        assert request.subscribed_topic_regex == "pay.*"


@pytest.mark.parametrize("version", [0, 1])
def test_heartbeat_request_encodes_to_kafka_bytes(version: int) -> None:
    fields = dict(
        group_id="group",
        member_id="member-1",
        member_epoch=3,
        instance_id="static-1",
        rack_id=None,
        rebalance_timeout_ms=45_000,
        subscribed_topic_names=["orders", "payments"],
        server_assignor="uniform",
        topic_partitions=[dict(topic_id=TOPIC, partitions=[0, 2])],
    )
    if version >= 1:
        fields["subscribed_topic_regex"] = None
    request = build_request(68, version, **fields)
    assert bytes(request.encode()) == heartbeat_request_bytes(version, None)


def test_heartbeat_request_nulls_mean_unchanged() -> None:
    body = (
        cstr("g") + cstr("m") + i32(7) + cstr(None) + cstr(None) + i32(-1) + carray(None)
        + cstr(None) + cstr(None) + carray(None) + NO_TAGS
    )  # fmt: skip
    request = REQUESTS[68].decode(body, version=1)
    assert request.subscribed_topic_names is None
    assert request.subscribed_topic_regex is None
    assert request.topic_partitions is None
    assert request.rebalance_timeout_ms == -1


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("with_assignment", [True, False])
def test_heartbeat_response_encodes_to_kafka_bytes(version: int, with_assignment: bool) -> None:
    assignment = dict(topic_partitions=[dict(topic_id=TOPIC, partitions=[1, 4])]) if with_assignment else None
    response = build_response(
        68,
        version,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        member_id="member-1",
        member_epoch=12,
        heartbeat_interval_ms=5000,
        assignment=assignment,
    )
    # A nullable struct: -1 (one byte 0xff) for null, 1 then the struct when present.
    expected_assignment = (
        b"\x01" + carray([TOPIC.bytes + carray([i32(1), i32(4)]) + NO_TAGS]) + NO_TAGS
        if with_assignment
        else b"\xff"
    )
    expected = (
        i32(0) + i16(0) + cstr(None) + cstr("member-1") + i32(12) + i32(5000) + expected_assignment + NO_TAGS
    )
    assert bytes(response.encode()) == expected


@pytest.mark.parametrize("version", [0, 1])
def test_describe_request_decodes_from_kafka_bytes(version: int) -> None:
    body = carray([cstr("a"), cstr("b")]) + b"\x01" + NO_TAGS
    request = REQUESTS[69].decode(body, version=version)
    assert list(request.group_ids) == ["a", "b"]
    assert request.include_authorized_operations is True


@pytest.mark.parametrize("version", [0, 1])
def test_describe_response_encodes_to_kafka_bytes(version: int) -> None:
    assignment = dict(topic_partitions=[dict(topic_id=TOPIC, topic_name="orders", partitions=[0])])
    member = dict(
        member_id="m",
        instance_id=None,
        rack_id="r1",
        member_epoch=4,
        client_id="c",
        client_host="/127.0.0.1",
        subscribed_topic_names=["orders"],
        subscribed_topic_regex=None,
        assignment=assignment,
        target_assignment=dict(topic_partitions=[]),
        member_type=1,
    )
    group = dict(
        error_code=0,
        error_message=None,
        group_id="g",
        group_state="stable",
        group_epoch=4,
        assignment_epoch=4,
        assignor_name="uniform",
        members=[member],
        authorized_operations=-(2**31),
    )
    response = build_response(69, version, throttle_time_ms=0, groups=[group])
    encoded_assignment = carray([TOPIC.bytes + cstr("orders") + carray([i32(0)]) + NO_TAGS]) + NO_TAGS
    encoded_member = (
        cstr("m") + cstr(None) + cstr("r1") + i32(4) + cstr("c") + cstr("/127.0.0.1")
        + carray([cstr("orders")]) + cstr(None) + encoded_assignment + carray([]) + NO_TAGS
        + (i8(1) if version >= 1 else b"") + NO_TAGS
    )  # fmt: skip
    encoded_group = (
        i16(0) + cstr(None) + cstr("g") + cstr("stable") + i32(4) + i32(4) + cstr("uniform")
        + carray([encoded_member]) + i32(-(2**31)) + NO_TAGS
    )  # fmt: skip
    assert bytes(response.encode()) == i32(0) + carray([encoded_group]) + NO_TAGS
