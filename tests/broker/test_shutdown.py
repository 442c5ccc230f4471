"""Stopping always finishes: `kafkito serve` exits on SIGTERM even when a component fails to close
(non-zero then, with the failure logged), and a second signal exits at once while a stop waits."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable

from kafka import KafkaProducer

from kafkito.protocol.codec import build_request
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until

API_VERSIONS = 18


def _terminate(broker: ProcessBroker) -> int:
    """SIGTERM and the exit status; a stop that hangs fails the test instead of being killed."""
    assert broker.proc is not None
    broker.proc.send_signal(signal.SIGTERM)
    try:
        return broker.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no exit after SIGTERM; log:\n{broker.log_path.read_text()[-3000:]}") from None


def _produce(broker: ProcessBroker, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        producer.send(topic, b"v").get(timeout=60)
    finally:
        producer.close()


def test_a_clean_stop_exits_zero(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    _produce(broker, "kept")
    assert _terminate(broker) == 0
    log = broker.log_path.read_text()
    assert '"clean": true' in log and "broker.stopped" in log


def test_stop_completes_after_a_partition_directory_is_removed(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process()
    _produce(broker, "doomed")
    _produce(broker, "survivor")
    shutil.rmtree(broker.data_dir / "doomed-0")

    assert _terminate(broker) == 1
    log = broker.log_path.read_text()
    assert "broker.stop_step_failed" in log and "doomed-0" in log
    assert "broker.stopped" in log
    assert "Task exception was never retrieved" not in log
    assert "Traceback" not in log  # a missing directory is an OSError: its message says it all
    # Every failure logged is the missing directory's: the other partitions closed as usual.
    failures = [line for line in log.splitlines() if "broker.stop_step_failed" in line]
    assert failures and all("doomed-0" in line for line in failures), failures


def _fill_responses(port: int) -> socket.socket:
    """A client that sends ApiVersions requests and never reads: the broker's writes back up.

    Sends until 20 passes in a row send nothing: the broker then stopped reading, which it does
    only with its own write buffer full (it stops answering first), so a graceful close must wait.
    """
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    request = build_request(API_VERSIONS, 0)
    request.with_header(correlation_id=1, client_id="never-reads")
    frames = bytes(request.encode(header=True, framed=True)) * 1000
    idle_passes = 0
    while idle_passes < 20:
        try:
            sent = sock.send(frames)
        except BlockingIOError:
            sent = 0
        idle_passes = 0 if sent else idle_passes + 1
        time.sleep(0.05)
    return sock


def test_a_second_signal_forces_exit_while_stop_waits(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    assert broker.proc is not None
    stuck = _fill_responses(broker.port)
    try:
        broker.proc.send_signal(signal.SIGTERM)
        # The stop is now waiting (up to its grace period) for the client to take its responses.
        wait_until(lambda: "connections.closing" in broker.log_path.read_text(), 60, "the stop to wait")
        broker.proc.send_signal(signal.SIGTERM)
        code = broker.proc.wait(timeout=60)
    finally:
        stuck.close()
    log = broker.log_path.read_text()
    assert code == 128 + signal.SIGTERM, log[-3000:]
    assert "broker.forced_exit" in log
    assert "broker.stopped" not in log
