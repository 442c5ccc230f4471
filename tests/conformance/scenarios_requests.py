"""Single requests whose answer hangs on a detail: FindCoordinator at each version and key type (its
messages, the internal topic it creates), and request frames refused for their size."""

from __future__ import annotations

import struct

from tests.conformance.framework import Side, scenario

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
