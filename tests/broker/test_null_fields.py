"""A required string, bytes or array field sent as null (length -1) gets Kafka's answer, for every API.

Kafka rejects such a request while parsing it ("non-nullable field ... was serialized as null") and
closes the connection. kafkito does the same at its decode boundary, logs one line without a stack
trace (rate-limited per event name), and keeps serving everyone else.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator

import pytest

from kafkito.broker.handlers import supported_versions
from kafkito.broker.log_rate import BUCKETS
from tests.protocol.samples import frame, null_paths, sample_request
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

# kafka-python writes a null Metadata v0 topic list as an empty one ("all topics"): no null to send.
_NOT_SENDABLE = {(3, 0, "topics")}
CASES = [
    (key, version, path)
    for key, lo, hi in supported_versions()
    for version in range(lo, hi + 1)
    for path in null_paths(key, version)
    if (key, version, path) not in _NOT_SENDABLE
]
BURST = int(BUCKETS._burst)


@pytest.fixture
def running(broker_process: Callable[..., ProcessBroker]) -> Iterator[ProcessBroker]:
    yield broker_process()


def _closed_lines(broker: ProcessBroker) -> list[dict[str, object]]:
    events = [json.loads(line) for line in broker.log_path.read_text().splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "connection.closed"]


def _send_and_expect_close(bootstrap: str, data: bytes) -> None:
    """Send one request; the broker must close the connection without answering."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(data)
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(1) == b"", "the broker answered a request that Kafka cannot parse"


def _probe(client: WireClient) -> None:
    response = client.request(18, 0)  # ApiVersions on a connection that stays open
    assert response.error_code == 0


def test_every_api_closes_on_a_null_required_field_with_one_line_and_no_traceback(
    running: ProcessBroker,
) -> None:
    # Every API but InitProducerId (its one string is nullable), DescribeAcls (its strings are nullable
    # filters), DescribeCluster and GetTelemetrySubscriptions (no string) has one.
    assert {key for key, _, _ in supported_versions()} - {key for key, _, _ in CASES} == {22, 29, 60, 71}
    with WireClient(running.bootstrap) as probe:
        _probe(probe)
        for i, (key, version, path) in enumerate(CASES):
            request = sample_request(key, version, null=path)
            _send_and_expect_close(running.bootstrap, frame(request, correlation_id=i))
            if i % 25 == 0:
                _probe(probe)
        _probe(probe)
        assert probe.request(3, 1, topics=[]).brokers  # Metadata still answered
    assert running.proc is not None and running.proc.poll() is None
    log = running.log_path.read_text()
    assert "Traceback" not in log and '"exception"' not in log
    closed = _closed_lines(running)
    # One line per bad request, until the event's budget runs out: then fewer, and a count of the rest.
    assert len(closed) <= len(CASES)
    for event, (key, version, path) in zip(closed[:BURST], CASES, strict=False):
        reason = str(event["reason"])
        assert "non-nullable field" in reason and path.split(".")[-1].replace("[0]", "") in reason, (
            key,
            version,
            path,
            reason,
        )
    assert len(closed) < len(CASES)

    def a_line_counts_the_dropped_ones() -> bool:  # the next line let through, once the bucket refills
        _send_and_expect_close(running.bootstrap, frame(sample_request(12, 4, null="member_id")))
        with WireClient(running.bootstrap) as probe:
            _probe(probe)
        return any(int(str(e.get("suppressed", 0))) > 0 for e in _closed_lines(running))

    wait_until(a_line_counts_the_dropped_ones, what="a connection.closed line with suppressed=N", poll=0.2)


@pytest.mark.parametrize(
    ("key", "version", "path"),
    [(12, 4, "member_id"), (0, 9, "topic_data.name"), (11, 5, "protocols.name"), (3, 9, "topics.name")],
)
def test_one_bad_request_logs_exactly_one_line(
    running: ProcessBroker, key: int, version: int, path: str
) -> None:
    assert (key, version, path) in CASES
    _send_and_expect_close(running.bootstrap, frame(sample_request(key, version, null=path)))
    with WireClient(running.bootstrap) as probe:
        _probe(probe)  # answered after the bad request: so its line is written
    closed = _closed_lines(running)
    assert len(closed) == 1, closed
    assert f"non-nullable field {path.replace('.', '[0].')}" in str(closed[0]["reason"])
    assert "Traceback" not in running.log_path.read_text()
