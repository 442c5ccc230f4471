"""Single requests whose answer hangs on a detail: FindCoordinator at each version and key type (its
messages, the internal topic it creates), request frames refused for their size, and requests refused
for a count they declare (Kafka 4.4's limits on arrays and tagged-field sections)."""

from __future__ import annotations

import struct

from kafkito.protocol.primitives import uvarint
from tests.conformance.framework import Side, scenario
from tests.support import limit_frames as frames
from tests.support.limit_frames import ARRAY_ABOVE, ARRAY_AT, FETCH, HEARTBEAT, TAGS_ABOVE, TAGS_AT

API_VERSIONS, FIND_COORDINATOR, METADATA = 18, 10, 3
REQUEST_MAX_BYTES = 104857600  # socket.request.max.bytes, Kafka's default on both brokers


@scenario("sequence")
def find_coordinator_versions(side: Side) -> None:
    g, tid = side.name("group"), side.name("txn")
    side.request(FIND_COORDINATOR, 0, "a group", key=g)
    for v in (1, 3):
        side.request(FIND_COORDINATOR, v, "a group", key=g, key_type=0)
        side.request(FIND_COORDINATOR, v, "a transactional id", key=tid, key_type=1)
        side.request(FIND_COORDINATOR, v, "an unknown key type", key=g, key_type=7)
    side.request(FIND_COORDINATOR, 4, "two group ids", key_type=0,
                 coordinator_keys=[g, tid])  # fmt: skip
    side.request(FIND_COORDINATOR, 4, "transactional ids", key_type=1, coordinator_keys=[tid, ""])
    side.request(FIND_COORDINATOR, 4, "an unknown key type", key_type=7, coordinator_keys=[g])


@scenario("api")
def request_frame_size(side: Side) -> None:
    """A frame whose size prefix is above socket.request.max.bytes, negative, or zero: only the prefix
    and an ApiVersions header are sent (the broker decides on the prefix)."""
    header = struct.pack(">hhih", API_VERSIONS, 0, 1, 0)
    for size, label in (
        (REQUEST_MAX_BYTES + 1, "one byte above socket.request.max.bytes"),
        (0x7FFFFFFF, "2 GiB"),
        (-1, "a negative size"),
    ):
        side.send_sized(API_VERSIONS, 0, size, header, label, conn=label)
        side.recv(label)
    side.send_sized(API_VERSIONS, 0, 0, b"", "an empty frame", conn="empty", wait=2.0)
    side.recv("empty")
    side.request(
        METADATA, 12, "then a request on a new connection", topics=[], allow_auto_topic_creation=False
    )


@scenario("api")
def request_count_limits(side: Side) -> None:
    """Counts just at Kafka 4.4's limits (an array of 1,000,000 elements, a tagged-field section of
    10,000 fields) and one above, each on its own connection: a session-less Fetch forgetting that many
    partitions (v11: a classic int32 length, v12: a compact varint one), then tagged fields in a
    FindCoordinator body (the codec), in the request header, and in a Heartbeat body (its own decoder);
    last, counts declared with a few bytes behind them."""
    g = side.name("group")
    for v in (11, 12):
        for count, label in ((ARRAY_AT, "at the limit"), (ARRAY_ABOVE, "one above")):
            _send(
                side, FETCH, v, frames.fetch_forgetting(v, count), f"forgetting {count} partitions, {label}"
            )
        few = frames.fetch_forgetting(v, 5, ARRAY_ABOVE)
        _send(side, FETCH, v, few, "declaring 1000001 partitions, sending 5")
    for count, label in ((TAGS_AT, "at the limit"), (TAGS_ABOVE, "one above")):
        tags = frames.tagged_section(count)
        for where, api_key, body, header_tags in (
            ("body", FIND_COORDINATOR, frames.find_coordinator(g, tags), b"\x00"),
            ("header", FIND_COORDINATOR, frames.find_coordinator(g), tags),
            ("body", HEARTBEAT, frames.heartbeat(g, tags), b"\x00"),
        ):
            _send(side, api_key, 4, body, f"{count} tagged fields in the {where}, {label}", header_tags)
    few = frames.find_coordinator(g, uvarint(TAGS_ABOVE) + b"\x05\x00\x06\x00")
    _send(side, FIND_COORDINATOR, 4, few, "declaring 10001 tagged fields, sending 2")
    cut = frames.find_coordinator(g, b"\x01\x05\x09ab")
    _send(side, FIND_COORDINATOR, 4, cut, "a tagged field of 9 bytes cut after 2")


def _send(
    side: Side, api_key: int, version: int, body: bytes, label: str, header_tags: bytes = b"\x00"
) -> None:
    """One request (`body` after a header whose tagged-field section is `header_tags`) on a connection
    of its own, its answer recorded."""
    request = frames.header(api_key, version, tags=header_tags) + body
    side.send_sized(api_key, version, len(request), request, label, conn=label)
    side.recv(label)
