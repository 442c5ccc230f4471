"""Kafka 4.4's limits on declared counts, at every decode boundary: the codec (kafka-python's compiled
decoders), the request header, and the hand-written Heartbeat and ConsumerGroupHeartbeat decoders.

An array of 1,000,000 elements and a tagged-field section of 10,000 fields are read; one more, or a
count larger than the bytes left, is a malformed request, which closes the connection (as Kafka 4.4
fails the parse and closes: `request_count_limits` in tests/conformance/scenarios_requests.py
compares the two brokers).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.handlers import consumer_group_heartbeat, heartbeat
from kafkito.protocol.codec import MalformedRequest, decode_request, is_flexible, parse_request_header
from kafkito.protocol.primitives import compact_string, uvarint
from tests.conftest import make_config
from tests.support import limit_frames as frames
from tests.support.brokers import ThreadBroker
from tests.support.limit_frames import (
    ARRAY_ABOVE as ABOVE,
)
from tests.support.limit_frames import (
    ARRAY_AT as AT,
)
from tests.support.limit_frames import (
    FETCH,
    FIND_COORDINATOR,
    HEARTBEAT,
    METADATA,
    TAGS_ABOVE,
    TAGS_AT,
    fetch_forgetting,
    framed,
    header,
    tagged_section,
)
from tests.support.wire import WireClient

CG_HEARTBEAT = 68


def decoded(frame: bytes, api_key: int, version: int) -> Any:
    return decode_request(frame, parse_request_header(frame, is_flexible(api_key, version)))


def find_coordinator_body(tags: bytes = b"\x00") -> bytes:
    return frames.find_coordinator("g", tags)


def heartbeat_body(tags: bytes = b"\x00") -> bytes:
    return frames.heartbeat("g", tags)


# -- arrays -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [11, 12], ids=["classic", "compact"])
def test_an_array_of_a_million_elements_is_read_and_one_more_is_refused(version: int) -> None:
    request = decoded(header(FETCH, version) + fetch_forgetting(version, AT), FETCH, version)
    assert len(request.forgotten_topics_data[0].partitions) == AT
    with pytest.raises(MalformedRequest, match=f"array of {ABOVE} elements, above the limit of {AT}"):
        decoded(header(FETCH, version) + fetch_forgetting(version, ABOVE), FETCH, version)


@pytest.mark.parametrize("version", [11, 12], ids=["classic", "compact"])
@pytest.mark.parametrize("declared", [ABOVE, 2_000_000_000, 26])
def test_an_array_declaring_more_elements_than_bytes_left_is_refused_before_any_is_read(
    version: int, declared: int
) -> None:
    frame = header(FETCH, version) + fetch_forgetting(version, 5, declared)
    with pytest.raises(MalformedRequest, match=f"array of {declared} elements declared with"):
        decoded(frame, FETCH, version)


def test_a_negative_array_length_is_null_as_minus_one_is() -> None:
    for length in (-1, -2, -(2**31)):
        frame = header(METADATA, 4) + struct.pack(">ib", length, 1)
        assert decoded(frame, METADATA, 4).topics is None  # all topics, as Kafka reads it
    assert decoded(header(METADATA, 4) + struct.pack(">ib", 0, 1), METADATA, 4).topics == []


# -- tagged-field sections ----------------------------------------------------------------------------


def test_a_request_body_with_ten_thousand_tagged_fields_is_read_and_one_more_is_refused() -> None:
    request = decoded(header(FIND_COORDINATOR, 4) + find_coordinator_body(tagged_section(TAGS_AT)),
                      FIND_COORDINATOR, 4)  # fmt: skip
    assert len(request.unknown_tags) == TAGS_AT and request.coordinator_keys == ["g"]
    with pytest.raises(MalformedRequest, match=f"{TAGS_ABOVE} tagged fields, above the limit of {TAGS_AT}"):
        decoded(header(FIND_COORDINATOR, 4) + find_coordinator_body(tagged_section(TAGS_ABOVE)),
                FIND_COORDINATOR, 4)  # fmt: skip


def test_a_tagged_section_declaring_more_fields_than_bytes_left_is_refused() -> None:
    frame = header(FIND_COORDINATOR, 4) + find_coordinator_body(uvarint(TAGS_ABOVE) + b"\x05\x00\x06\x00")
    with pytest.raises(MalformedRequest, match=f"{TAGS_ABOVE} tagged fields declared with 4 bytes left"):
        decoded(frame, FIND_COORDINATOR, 4)


def test_an_unknown_tagged_field_cut_by_the_end_of_the_request_is_refused() -> None:
    frame = header(FIND_COORDINATOR, 4) + find_coordinator_body(b"\x01\x05\x09ab")  # 9 bytes said, 2 sent
    with pytest.raises(MalformedRequest, match="tagged field 5 of 9 bytes runs past the end"):
        decoded(frame, FIND_COORDINATOR, 4)
    assert decoded(header(FIND_COORDINATOR, 4) + find_coordinator_body(b"\x01\x05\x02ab"), FIND_COORDINATOR,
                   4).unknown_tags == {"_5": b"ab"}  # fmt: skip


def test_the_request_header_takes_ten_thousand_tagged_fields_and_refuses_one_more() -> None:
    body = find_coordinator_body()
    frame = header(FIND_COORDINATOR, 4, tags=tagged_section(TAGS_AT)) + body
    assert parse_request_header(frame, True).body_offset == len(frame) - len(body)
    with pytest.raises(MalformedRequest, match=f"{TAGS_ABOVE} tagged fields, above the limit"):
        parse_request_header(header(FIND_COORDINATOR, 4, tags=tagged_section(TAGS_ABOVE)) + body, True)


def test_the_heartbeat_decoder_takes_ten_thousand_tagged_fields_and_refuses_one_more() -> None:
    offset = len(header(HEARTBEAT, 4))
    at = header(HEARTBEAT, 4) + heartbeat_body(tagged_section(TAGS_AT))
    assert heartbeat.decode(at, offset, 4).member_id == "m"
    above = header(HEARTBEAT, 4) + heartbeat_body(tagged_section(TAGS_ABOVE))
    with pytest.raises(MalformedRequest, match=f"{TAGS_ABOVE} tagged fields, above the limit"):
        heartbeat.decode(above, offset, 4)


def _consumer_heartbeat(names: int, partitions: int = 1) -> bytes:
    """A ConsumerGroupHeartbeat v1 body subscribing to `names` empty topic names, owning `partitions`
    partitions of one topic."""
    head = compact_string("g") + compact_string("m") + struct.pack(">i", 0) + b"\x00\x00"
    subscription = struct.pack(">i", 30000) + uvarint(names + 1) + b"\x01" * names + b"\x00\x00"
    owned = uvarint(2) + bytes(16) + uvarint(partitions + 1) + bytes(4 * partitions) + b"\x00"
    return head + subscription + owned + b"\x00"


@pytest.mark.parametrize(("names", "partitions"), [(ABOVE, 1), (1, ABOVE)], ids=["names", "partitions"])
def test_the_consumer_group_heartbeat_decoder_holds_its_arrays_to_the_limit(
    names: int, partitions: int
) -> None:
    offset = len(header(CG_HEARTBEAT, 1))
    at = consumer_group_heartbeat.decode(
        header(CG_HEARTBEAT, 1) + _consumer_heartbeat(min(names, AT), min(partitions, AT)), offset, 1
    )
    assert at.subscribed_topic_names is not None and at.owned_partitions is not None
    assert {len(at.subscribed_topic_names), len(at.owned_partitions[0][1])} <= {1, AT}
    with pytest.raises(MalformedRequest, match=f"array of {ABOVE} elements, above the limit"):
        consumer_group_heartbeat.decode(
            header(CG_HEARTBEAT, 1) + _consumer_heartbeat(names, partitions), offset, 1
        )


# -- over TCP -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    thread = ThreadBroker(make_config(Path(tmp_path_factory.mktemp("limits")))).start()
    yield thread
    thread.stop()


def _exchange(bootstrap: str, request: bytes) -> bytes | None:
    """The answer to one request on a new connection, or None when the broker closed it."""
    with WireClient(bootstrap) as client:
        client.send_raw(framed(request))
        return client.recv_frame()


# what -> a request of that count at the limit, and one above it
_AT_AND_ABOVE: dict[str, Callable[[bool], bytes]] = {
    "compact array": lambda above: header(FETCH, 12) + fetch_forgetting(12, ABOVE if above else AT),
    "classic array": lambda above: header(FETCH, 11) + fetch_forgetting(11, ABOVE if above else AT),
    "tagged fields": lambda above: header(HEARTBEAT, 4)
    + heartbeat_body(tagged_section(TAGS_ABOVE if above else TAGS_AT)),
}  # fmt: skip


@pytest.mark.parametrize("what", sorted(_AT_AND_ABOVE))
def test_a_count_over_the_limit_closes_the_connection_and_one_at_it_is_answered(
    broker: ThreadBroker, what: str
) -> None:
    answer = _exchange(broker.bootstrap, _AT_AND_ABOVE[what](False))
    assert answer is not None and answer[:4] == struct.pack(">i", 1)  # its correlation id
    assert _exchange(broker.bootstrap, _AT_AND_ABOVE[what](True)) is None
