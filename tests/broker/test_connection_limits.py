"""Connection limits as Kafka names them: connections.max.idle.ms (idle connections and slow partial
requests), max.connections, max.connections.per.ip, and queued.max.request.bytes (the memory pool for
requests being received). Real broker processes over real TCP; memory is read from /proc."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafkito.broker.memory_pool import MemoryPool
from tests.support.brokers import ProcessBroker, ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

API_VERSIONS = 18
FETCH = 1
MIB = 1 << 20


def _answers(bootstrap: str) -> bool:
    """A new connection gets an ApiVersions answer (False if the broker closes it instead)."""
    try:
        with WireClient(bootstrap, timeout=10) as client:
            return client.request(API_VERSIONS, 0).error_code == 0
    except (ConnectionError, OSError):
        return False


def _closed_by_broker(sock: socket.socket, timeout: float = 60.0) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _log(broker: ProcessBroker) -> str:
    return broker.log_path.read_text()


# connections.max.idle.ms ----------------------------------------------------------------------------
def test_an_idle_partial_frame_is_closed_after_connections_max_idle_ms(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process(connections_max_idle_ms=500)
    with socket.create_connection(("127.0.0.1", broker.port)) as sock:
        sock.sendall(struct.pack(">i", 1000) + b"\x00" * 10)  # 10 bytes of a 1,000-byte request, then silence
        assert _closed_by_broker(sock)
    wait_until(lambda: "partial request for more than connections.max.idle.ms=500" in _log(broker), 30)
    assert _answers(broker.bootstrap)  # the broker itself carries on


def test_a_trickled_frame_is_closed_although_bytes_keep_coming(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    """A slow partial request is timed from its first byte: one byte every 50 ms does not keep it open."""
    broker = broker_process(connections_max_idle_ms=500)
    size = 100_000  # would take well over an hour at this pace
    sent = 0
    with socket.create_connection(("127.0.0.1", broker.port)) as sock:
        sock.sendall(struct.pack(">i", size))
        try:
            while sent < size:
                sock.sendall(b"\x00")
                sent += 1
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert sent < size
    assert "partial request for more than connections.max.idle.ms" in _log(broker)


def test_an_idle_connection_is_closed_after_connections_max_idle_ms(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process(connections_max_idle_ms=500)
    with WireClient(broker.bootstrap) as idle:
        assert idle.request(API_VERSIONS, 0).error_code == 0
        assert _closed_by_broker(idle.sock)
    assert "idle for more than connections.max.idle.ms=500" in _log(broker)


def test_a_request_parked_longer_than_the_idle_time_is_answered(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    """A long-poll Fetch waiting on an empty partition is work in progress, not idleness."""
    broker = broker_process(connections_max_idle_ms=200)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    producer.send("quiet", b"first").get(timeout=60)  # creates the topic; offset 1 is the log end
    producer.close()
    partitions = [dict(partition=0, fetch_offset=1, partition_max_bytes=1024)]
    with WireClient(broker.bootstrap, timeout=60) as client:
        response = client.request(
            FETCH,
            4,
            replica_id=-1,
            max_wait_ms=2000,  # ten times the idle limit
            min_bytes=1,
            max_bytes=1024,
            isolation_level=0,
            topics=[dict(topic="quiet", partitions=partitions)],
        )
    assert response.responses[0].partitions[0].error_code == 0
    assert "connections.max.idle.ms" not in _log(broker)


# max.connections / max.connections.per.ip -----------------------------------------------------------
@pytest.mark.parametrize("prop", ["max_connections", "max_connections_per_ip"])
def test_connections_over_the_limit_are_closed_at_once(
    broker_process: Callable[..., ProcessBroker], prop: str
) -> None:
    broker = broker_process(**{prop: 3})
    held = [WireClient(broker.bootstrap) for _ in range(3)]
    try:
        for client in held:
            assert client.request(API_VERSIONS, 0).error_code == 0
        with socket.create_connection(("127.0.0.1", broker.port)) as extra:
            assert _closed_by_broker(extra)
        assert f'"reason": "{prop.replace("_", ".")}"' in _log(broker)
        for client in held:  # the admitted ones are untouched
            assert client.request(API_VERSIONS, 0).error_code == 0
        held.pop().close()
        wait_until(lambda: _answers(broker.bootstrap), 30, "a slot freed by a closed connection")
    finally:
        for client in held:
            client.close()


# queued.max.request.bytes ---------------------------------------------------------------------------
@pytest.fixture
def partial_senders() -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    yield socks
    for sock in socks:
        sock.close()


def _fill(socks: list[socket.socket], frame_size: int, sample: Callable[[], object] = lambda: None) -> int:
    """Send each socket all but the last byte of a `frame_size` request, as far as TCP takes it.

    Returns the bytes sent. Stops after 20 passes over the sockets in a row send nothing (the
    kernel's buffers and the broker are full), counting passes, not time; `sample()` runs every pass.
    """
    remaining = [frame_size + 3] * len(socks)  # the 4-byte size and frame_size - 1 bytes of body
    chunk = b"\x00" * 65536
    for i, sock in enumerate(socks):
        sock.setblocking(False)
        remaining[i] -= sock.send(struct.pack(">i", frame_size))
    sent = 0
    idle_passes = 0
    while idle_passes < 20 and any(remaining):
        progress = 0
        for i, sock in enumerate(socks):
            while remaining[i]:
                try:
                    n = sock.send(chunk[: min(len(chunk), remaining[i])])
                except BlockingIOError:
                    break
                remaining[i] -= n
                progress += n
        sent += progress
        idle_passes = 0 if progress else idle_passes + 1
        sample()
        time.sleep(0.05)
    return sent


def test_memory_stays_under_the_pool_limit_while_1000_connections_hold_partial_frames(
    broker_process: Callable[..., ProcessBroker], partial_senders: list[socket.socket]
) -> None:
    pool = 8 * MIB
    broker = broker_process(queued_max_request_bytes=pool)
    assert broker.proc is not None
    pid = broker.proc.pid
    assert _answers(broker.bootstrap)
    baseline = _rss_bytes(pid)
    peak = baseline

    def sample() -> None:
        nonlocal peak
        peak = max(peak, _rss_bytes(pid))

    for _ in range(1000):
        partial_senders.append(socket.create_connection(("127.0.0.1", broker.port)))
    sent = _fill(partial_senders, 512 * 1024, sample)

    # Without a pool the broker holds what it reads of what was sent; with one, the pool plus the
    # connections' own objects (a few KB each) and at most one request of overshoot.
    margin = 40 * MIB
    assert sent > pool + 4 * margin, f"only {sent} bytes could be sent: the test would prove nothing"
    held = peak - baseline
    assert held < pool + margin, f"RSS grew {held >> 20} MiB, pool {pool >> 20} MiB, {sent >> 20} MiB sent"

    for sock in partial_senders:
        sock.close()
    partial_senders.clear()
    # The pool is whole again: a big request is read and answered.
    wait_until(lambda: _answers(broker.bootstrap), 60, "the broker answering after the holders left")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        producer.send("after-pool", b"x" * (900 * 1024)).get(timeout=60)
    finally:
        producer.close()
    after = _rss_bytes(pid) - baseline
    assert after < pool + margin, f"RSS stayed {after >> 20} MiB above the start after the connections closed"


def test_memory_of_partial_frames_is_returned_after_their_connections_close(
    broker_process: Callable[..., ProcessBroker], partial_senders: list[socket.socket]
) -> None:
    """With Kafka's default (no pool), what 1,000 slow requests held goes back to the OS once they close."""
    broker = broker_process(connections_max_idle_ms=10_000)  # housekeeping runs every second
    assert broker.proc is not None
    pid = broker.proc.pid
    assert _answers(broker.bootstrap)
    baseline = _rss_bytes(pid)
    for _ in range(1000):
        partial_senders.append(socket.create_connection(("127.0.0.1", broker.port)))
    sent = _fill(partial_senders, 256 * 1024)
    margin = 40 * MIB
    reading = f"the broker reading what was sent ({sent >> 20} MiB)"
    wait_until(lambda: _rss_bytes(pid) - baseline > 2 * margin, 60, reading)
    for sock in partial_senders:
        sock.close()
    partial_senders.clear()
    wait_until(
        lambda: _rss_bytes(pid) - baseline < margin,
        60,
        "RSS back near where it started",
        detail=lambda: f"RSS {(_rss_bytes(pid) - baseline) >> 20} MiB above the start",
    )
    assert _answers(broker.bootstrap)


def test_requests_bigger_than_the_pool_from_several_clients_all_complete(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    """Waiting for the pool cannot deadlock: every request larger than half the pool gets through."""
    broker = broker_process(queued_max_request_bytes=MIB)
    producers = [
        KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=2 * MIB, linger_ms=0)
        for _ in range(4)
    ]
    try:
        value = 700 * 1024
        futures = [p.send("big", bytes([i]) * value) for i, p in enumerate(producers) for _ in range(3)]
        for future in futures:
            future.get(timeout=120)
    finally:
        for p in producers:
            p.close()
    consumer = KafkaConsumer(
        "big",
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=20_000,
        fetch_max_bytes=4 * MIB,
        max_partition_fetch_bytes=4 * MIB,
    )
    try:
        values = [record.value for record in consumer]
    finally:
        consumer.close()
    assert sorted(v[0] for v in values) == sorted(i for i in range(4) for _ in range(3))


def test_the_pool_is_whole_again_once_requests_are_answered_or_abandoned(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    running = broker_factory(queued_max_request_bytes=MIB)
    pool = running.call(lambda: running.broker.connections.pool if running.broker else None)
    assert pool is not None
    producer = KafkaProducer(bootstrap_servers=running.bootstrap, max_request_size=2 * MIB)
    abandoned = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(20)]
    try:
        for sock in abandoned:  # each announces 400 KiB and sends part of it: only some are granted
            sock.sendall(struct.pack(">i", 400 * 1024) + b"\x00" * 1000)
        wait_until(lambda: running.call(lambda: pool.waiting) > 0, 30, "requests waiting for the pool")
        for sock in abandoned:
            sock.close()
        producer.send("whole", b"x" * (600 * 1024)).get(timeout=60)  # larger than what is left over
    finally:
        producer.close()
    wait_until(lambda: running.call(lambda: (pool.used, pool.waiting)) == (0, 0), 30, "an empty pool")


def test_the_pool_grants_in_arrival_order_and_never_deadlocks() -> None:
    pool = MemoryPool(100)
    granted: list[str] = []
    assert pool.reserve("a", 60, 0, lambda: granted.append("a"))
    pool.charge(10)  # b has read 10 bytes of a 80-byte request before its size was known
    assert not pool.reserve("b", 70, 10, lambda: granted.append("b"))
    pool.charge(5)
    assert not pool.reserve("c", 5, 5, lambda: granted.append("c"))  # fits, but b came first
    assert granted == []
    pool.release(60)  # a is done: b's 70 more fit next to what b and c hold
    assert granted == ["b", "c"] and pool.used == 90
    # Only waiters hold memory: the first is granted even over the limit, or nobody would progress.
    stuck = MemoryPool(10)
    stuck.charge(8)
    assert not stuck.reserve("d", 50, 8, lambda: granted.append("d"))
    assert granted[-1] == "d" and stuck.used == 58
    assert MemoryPool(-1).reserve("e", 1 << 40, 0, lambda: None)  # -1: no limit
