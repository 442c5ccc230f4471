"""Bad input closes only the offending connection; unsupported versions are answered as Kafka does."""

from __future__ import annotations

import inspect
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.dispatch import CloseConnection, dispatch
from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import REQUESTS, RESPONSES
from kafkito.protocol.errors import ErrorCode
from tests.conftest import make_config
from tests.protocol.strategies import request_of
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

SUPPORTED = [(key, v) for key, lo, hi in supported_versions() for v in range(lo, hi + 1)]


@pytest.fixture(scope="module")
def offline_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    """A running broker whose dispatch is called directly on its loop, without a socket."""
    running = ThreadBroker(make_config(tmp_path_factory.mktemp("fuzz"))).start()
    yield running
    running.stop()


def _answer_or_close(running: ThreadBroker, frame: bytes) -> None:
    assert running.broker is not None
    broker = running.broker

    def call() -> None:
        try:
            reply = dispatch(broker, frame, "fuzz")
        except CloseConnection:
            return
        if inspect.isawaitable(reply):
            reply.close()  # type: ignore[attr-defined]
        else:
            assert reply is None or isinstance(reply, bytes)

    running.call(call)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64) | st.builds(lambda k, v, rest: struct.pack(">hh", k, v) + rest,
       st.sampled_from([k for k, _ in SUPPORTED]), st.integers(-2, 20), st.binary(max_size=64)))  # fmt: skip
def test_random_frames_are_answered_or_close_the_connection(
    offline_broker: ThreadBroker, frame: bytes
) -> None:
    _answer_or_close(offline_broker, frame)


@st.composite
def truncated_requests(draw: st.DrawFn) -> bytes:
    key, version = draw(st.sampled_from(SUPPORTED))
    request = draw(request_of(REQUESTS[key], version))
    request.with_header(correlation_id=1, client_id="fuzz")
    body = bytes(request.encode(header=True, framed=False))
    return body[: draw(st.integers(0, len(body)))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(truncated_requests())
def test_truncated_requests_are_answered_or_close_the_connection(
    offline_broker: ThreadBroker, frame: bytes
) -> None:
    _answer_or_close(offline_broker, frame)


def test_garbage_closes_only_that_connection(broker: ThreadBroker) -> None:
    bad_frames = [
        struct.pack(">i", -5),  # negative size
        struct.pack(">i", 200 * 1024 * 1024),  # over socket.request.max.bytes, rejected before reading a body
        struct.pack(">ihhi", 8, 9999, 0, 1),  # unknown api key
        struct.pack(">ihhih", 12, 3, 12, 7, 50) + b"xx",  # Metadata v12 whose client id runs off the frame
    ]
    with WireClient(broker.bootstrap) as healthy:
        for frame in bad_frames:
            with WireClient(broker.bootstrap) as bad:
                bad.send_raw(frame)
                assert bad.is_closed_by_peer()
            response = healthy.request(18, 3, client_software_name="t", client_software_version="1")
            assert response.error_code == ErrorCode.NONE


def test_api_versions_of_unknown_version_answers_v0_with_its_own_range(broker: ThreadBroker) -> None:
    """As Kafka (KIP-511): UNSUPPORTED_VERSION in v0, listing only ApiVersions, whose range the client
    retries within."""
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">ihhih", 10, 18, 99, 42, 0))
        frame = client.recv_frame()
        assert frame is not None
        response = RESPONSES[18].decode(frame, version=0, header=True)
        assert response.header.correlation_id == 42
        assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
        ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        assert ranges == {18: (0, 5)}


@pytest.mark.parametrize(("name", "version"), [("", "1"), ("bad name", "1"), ("ok", "-1.0"), ("ok", "1.")])
def test_api_versions_with_an_invalid_software_name_is_invalid_request_and_lists_nothing(
    broker: ThreadBroker, name: str, version: str
) -> None:
    """Kafka checks v3's client software name and version against [a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?
    and answers a mismatch with INVALID_REQUEST and no API versions."""
    with WireClient(broker.bootstrap) as client:
        correlation_id = client.send(18, 3, client_software_name=name, client_software_version=version)
        frame = client.recv_frame()
        # Hand-read at v3 (kafka-python reads any ApiVersions error as v0): header v0, error_code,
        # api_keys as an empty compact array, throttle_time_ms, no tagged fields.
        assert frame == struct.pack(">ihbib", correlation_id, ErrorCode.INVALID_REQUEST, 1, 0, 0)
        good = client.request(18, 3, client_software_name="kafkito-test", client_software_version="1.0")
        assert good.error_code == ErrorCode.NONE and len(good.api_keys) > 40


def test_other_api_at_unsupported_version_closes_the_connection(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">ihhih", 10, 3, 13, 1, 0))  # Metadata v13 (we answer up to v12)
        assert client.is_closed_by_peer()


def test_requests_on_one_connection_are_answered_in_order(broker: ThreadBroker, tmp_path: Path) -> None:
    with WireClient(broker.bootstrap) as client:
        sent = [client.send(3, 12, topics=None, allow_auto_topic_creation=False) for _ in range(50)]
        got = [client.recv(3, 12).header.correlation_id for _ in sent]
    assert got == sent
