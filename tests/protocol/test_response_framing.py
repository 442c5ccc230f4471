"""Hand-encoded response bodies get the same header and size prefix as codec-encoded ones."""

from __future__ import annotations

import pytest

from kafkito.protocol.codec import build_response, encode_response, frame_response_body


@pytest.mark.parametrize(("api_key", "version"), [(12, 0), (12, 3), (12, 4), (18, 3), (3, 9), (3, 1)])
def test_frame_response_body_matches_the_codec(api_key: int, version: int) -> None:
    fields = {"throttle_time_ms": 7, "error_code": 27} if api_key == 12 else {}
    if api_key == 3:
        fields = {"brokers": [], "topics": []}
    if api_key == 18:
        fields = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}
    response = build_response(api_key, version, **fields)
    whole = encode_response(response, correlation_id=99)
    body = bytes(build_response(api_key, version, **fields).encode(version=version))
    assert frame_response_body(body, 99, api_key, version) == whole
