"""Fetch responses sent with sendfile are byte-identical to the read path's, wherever the fetch starts.

A log of batches of random sizes over many small segments is fetched over real TCP at random
positions, limits and versions; the frame that arrives (its records sent from the segment files by
`os.sendfile`) must equal the one the read path builds in the broker (`read_partitions` without
regions: pread, then one encoded body). The same holds on the steered path (a fault rule in force),
which reads the regions into bytes. (A TLS listener cannot use sendfile: tests/security/test_tls.py.)
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.fetch_wait import PartitionFetch, read_partitions
from kafkito.broker.handlers import fetch
from kafkito.broker.log.segment import Segment
from kafkito.broker.spliced import Spliced
from kafkito.protocol.codec import RequestHeader, frame_response_body
from tests.conftest import make_config
from tests.support.brokers import ThreadBroker
from tests.support.produce import send_confluent
from tests.support.records import Rec
from tests.support.wire import WireClient

TOPIC = "spliced"
PARTITIONS = 2
SEGMENT_BYTES = 96 * 1024
BIG = "spliced-big"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    """A broker whose topic holds batches of 0.1-40 KiB over segments of 96 KiB, in both partitions."""
    config = make_config(tmp_path_factory.mktemp("spliced"), num_partitions=PARTITIONS)
    broker = ThreadBroker(config).start()
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic(TOPIC, PARTITIONS, 1, config={"segment.bytes": str(SEGMENT_BYTES)})
    admin.create_topics([topic])[TOPIC].result(30)
    admin.create_topics([NewTopic(BIG, 1, 1)])[BIG].result(30)
    rng = random.Random(21)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 1000, "compression.type": "none"}
    )
    for _ in range(60):  # one batch per flush: sizes spread from a hundred bytes to 40 KiB
        count = rng.randint(1, 40)
        size = rng.randint(100, 40 * 1024) // count
        recs = [Rec(rng.randrange(PARTITIONS), None, rng.randbytes(size)) for _ in range(count)]
        send_confluent(producer, TOPIC, recs)

    def segments() -> list[int]:
        assert broker.broker is not None
        return [len(broker.broker.logs.get_log(TOPIC, p)._segments) for p in range(PARTITIONS)]

    assert min(broker.call(segments)) >= 4, "the log must span several segments"
    # More than the broker's socket send buffer can hold (tcp_wmem's maximum is 4 MiB on Linux).
    send_confluent(producer, BIG, [Rec(0, None, rng.randbytes(64 * 1024)) for _ in range(128)])
    yield broker
    broker.stop()


def _high_watermarks(broker: ThreadBroker) -> list[int]:
    def read() -> list[int]:
        assert broker.broker is not None
        return [broker.broker.logs.get_log(TOPIC, p).high_watermark for p in range(PARTITIONS)]

    return broker.call(read)


def _read_path_frame(
    broker: ThreadBroker, version: int, correlation_id: int, request: dict[str, Any]
) -> bytes:
    """The frame the broker answers `request` with when it reads every record into bytes."""

    def answer() -> bytes:
        assert broker.broker is not None
        ctx = broker.broker.context_type(
            RequestHeader(1, version, correlation_id, "wire-test", 0), "127.0.0.1"
        )
        wanted = [
            PartitionFetch(t["topic"], None, p["partition"], p["fetch_offset"], p["partition_max_bytes"])
            for t in request["topics"]
            for p in t["partitions"]
        ]
        result = read_partitions(ctx.topics, wanted, request["max_bytes"], 0, None)
        body = fetch._response(ctx, wanted, result)
        assert isinstance(body, bytes)
        return frame_response_body(body, correlation_id, 1, version)[4:]

    return broker.call(answer)


def _fetch_request(
    version: int, positions: list[tuple[int, int, int]], max_bytes: int, topic: str = TOPIC
) -> dict[str, Any]:
    return dict(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=max_bytes,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            dict(
                topic=topic,
                partitions=[
                    dict(partition=p, fetch_offset=offset, partition_max_bytes=limit, log_start_offset=-1)
                    for p, offset, limit in positions
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


fetches = st.tuples(
    st.integers(fetch.FIRST_V2_FORMAT, 12),  # by topic name (v13+ by id: the same path after lookup)
    st.lists(
        st.tuples(st.integers(0, PARTITIONS - 1), st.floats(0, 1), st.integers(1, 200 * 1024)),
        min_size=1,
        max_size=PARTITIONS,
        unique_by=lambda p: p[0],
    ),
    st.integers(1, 400 * 1024),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fetch_at=fetches, steered=st.booleans())
def test_a_spliced_fetch_arrives_byte_identical_to_the_read_path(
    served: ThreadBroker, fetch_at: tuple[int, list[tuple[int, float, int]], int], steered: bool
) -> None:
    version, positions, max_bytes = fetch_at
    hws = _high_watermarks(served)
    at = [(p, int(where * hws[p]), limit) for p, where, limit in positions]
    request = _fetch_request(version, at, max_bytes)
    rule = None
    if steered:  # any rule in force sends every request down the steered path
        assert served.broker is not None
        rule = served.call(
            lambda: served.broker.steering.inject(
                "ListGroups", "COORDINATOR_NOT_AVAILABLE", None, client_id="nobody"
            )
        )
    try:
        with WireClient(served.bootstrap) as client:
            correlation_id = client.send(1, version, **request)
            frame = client.recv_frame()
    finally:
        if rule is not None:
            served.call(lambda: served.broker.steering.remove_fault(rule.id))
    assert frame == _read_path_frame(served, version, correlation_id, request)


def test_a_slow_reader_gets_a_large_answer_whole_and_in_order(served: ThreadBroker) -> None:
    """A client with a tiny receive window makes sendfile stop short many times: the connection waits
    for the socket, finishes the frame, then answers the request queued behind it."""
    import socket
    import time

    client = WireClient(served.bootstrap)
    client.sock.close()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", served.port))
    client.sock = sock
    with client:
        request = _fetch_request(12, [(0, 0, 1 << 30)], 1 << 30, BIG)
        first = client.send(1, 12, **request)
        second = client.send(18, 3, client_software_name="t", client_software_version="1")
        time.sleep(0.3)  # the broker meets a full socket meanwhile
        frame = client.recv_frame()
        assert frame == _read_path_frame(served, 12, first, request)
        assert frame is not None and len(frame) > 128 * 64 * 1024
        versions = client.recv(18, 3)
        assert versions.header.correlation_id == second and versions.error_code == 0


def test_large_fetches_do_leave_their_records_in_the_files(served: ThreadBroker) -> None:
    """The property above compares spliced answers: most of its fetches are at least REGION_AT."""

    def body() -> Any:
        assert served.broker is not None
        ctx = served.broker.context_type(RequestHeader(1, 12, 1, "wire-test", 0), "127.0.0.1")
        wanted = [PartitionFetch(TOPIC, None, 0, 0, 1 << 20)]
        result = read_partitions(ctx.topics, wanted, 1 << 20, 0, fetch.REGION_AT)
        return fetch._response(ctx, wanted, result)

    spliced = served.call(body)
    assert isinstance(spliced, Spliced)
    assert len(spliced.materialize()) == spliced.size


def test_a_region_outlives_its_segment_being_closed_and_deleted(tmp_path: Path) -> None:
    """Retention may delete a segment between a fetch's read and its send: the region still sends."""
    segment = Segment.create(tmp_path, 0, 4096, 0)
    data = os.urandom(5000)
    with open(segment.path, "ab") as f:
        f.write(data)
    region = segment.region(100, 4000)
    segment.close()
    os.unlink(segment.path)
    assert region.read() == data[100:4100]
    region.close()
    assert region.fd == -1


def test_with_no_descriptor_left_a_read_falls_back_to_bytes(tmp_path: Path) -> None:
    """EMFILE while duplicating the segment's descriptor is no disk failure: the bytes are read instead."""
    import subprocess
    import sys

    script = f"""
import os, resource
from pathlib import Path
from kafkito.broker.log.segment import Segment
segment = Segment.create(Path({str(tmp_path)!r}), 0, 4096, 0)
with open(segment.path, "ab") as f:
    f.write(bytes(range(256)) * 40)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
data = segment.region(10, 5000)
assert isinstance(data, bytes) and data == (bytes(range(256)) * 40)[10:5010], type(data)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
