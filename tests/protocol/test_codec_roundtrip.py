"""Every API/version we advertise round-trips through the broker's frame receiver and codec facade."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import REQUESTS, decode_request, is_flexible, parse_request_header
from tests.protocol.strategies import request_of
from tests.support.receiving import Receiving

SUPPORTED = [(key, v) for key, lo, hi in supported_versions() for v in range(lo, hi + 1)]


@st.composite
def framed_requests(draw: st.DrawFn) -> tuple[int, int, Any, bytes]:
    key, version = draw(st.sampled_from(SUPPORTED))
    request = draw(request_of(REQUESTS[key], version))
    request.with_header(
        correlation_id=draw(st.integers(-(2**31), 2**31 - 1)),
        client_id=draw(st.none() | st.text(max_size=10)),
    )
    return key, version, request, bytes(request.encode(header=True, framed=True))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(framed_requests(), st.lists(st.integers(1, 64), max_size=8))
def test_every_supported_request_round_trips(sample: tuple[int, int, Any, bytes], cuts: list[int]) -> None:
    key, version, request, wire = sample
    feeding = Receiving(max_bytes=1 << 20)
    frames: list[bytes] = []
    pos = 0
    for cut in cuts:  # arbitrary TCP segmentation
        frames += feeding.feed(wire[pos : pos + cut])
        pos += cut
    frames += feeding.feed(wire[pos:])
    assert len(frames) == 1 and not feeding.receiver.partial
    header = parse_request_header(frames[0], is_flexible(key, version))
    assert (header.api_key, header.api_version) == (key, version)
    assert header.correlation_id == request.header.correlation_id
    assert header.client_id == request.header.client_id
    decoded = decode_request(frames[0], header)
    reference = REQUESTS[key].decode(frames[0], version=version, header=True)
    assert decoded.to_dict() == reference.to_dict()
    assert bytes(request.encode()) == frames[0][header.body_offset :]


def test_every_advertised_api_has_a_codec_for_every_version() -> None:
    for key, version in SUPPORTED:
        assert REQUESTS[key].min_version <= version <= REQUESTS[key].max_version
