"""The reference Apache Kafka 4.4 for tests: one KRaft node (broker and controller) on loopback, run from
the classpath `make install-clients` resolves (tests/kafka_reference), with its storage in a temp dir.

`KafkaReference(props).start()` formats the storage with Kafka's StorageTool, starts `kafka.Kafka`,
(`sasl=True` adds a SASL_PLAINTEXT listener with SCRAM-SHA-256 and -512 on `sasl_port`)
waits until it answers Metadata, and `stop()` sends SIGTERM (SIGKILL a few seconds later) and removes
its directory. Its ports are found by bind tests and held by a lock file each while it runs, so two
sessions on one machine never pick the same one; a start that loses a port race anyway is retried.
"""

from __future__ import annotations

import base64
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "tests" / "kafka_reference"
CLASSPATH_FILE = PROJECT / "target" / "classpath.txt"
JAVA_HOME = Path(os.environ.get("KAFKA_REFERENCE_JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"))
STORAGE_TOOL = "kafka.tools.StorageTool"
BROKER_MAIN = "kafka.Kafka"
# A small heap and the quick JIT tier: a test broker handles little and starts ~1.5 s sooner
# (BENCHMARKS.md, "The reference Kafka's start").
JVM_OPTIONS = ("-Xmx512m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")

# The properties a compared kafkito is given too: Kafka's defaults where kafkito has the same, and
# what one node needs (replication factors and min ISRs of 1, no initial rebalance delay).
COMPARED_PROPS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "auto.create.topics.enable": "true",
    "group.coordinator.rebalance.protocols": "classic,consumer,share,streams",
}
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.state.name = state.change.logger
logger.state.level = warn
"""
PORT_LOCKS = Path(tempfile.gettempdir()) / "kafkito-test-ports"


def _cluster_id() -> str:
    """A random cluster id as Kafka's (base64url of a UUID), never one starting with '-': the
    StorageTool's argument parser takes that for an option ("--cluster-id: expected one argument"),
    and one in 64 would fail to format."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class ReferenceUnavailable(RuntimeError):
    """The reference Kafka cannot run here: no classpath (run `make install-clients`) or no Java 17."""


def classpath() -> str:
    """The classpath `make install-clients` wrote, checked to name jars that exist."""
    if not CLASSPATH_FILE.exists():
        raise ReferenceUnavailable(f"{CLASSPATH_FILE} is missing: run `make install-clients`")
    cp = CLASSPATH_FILE.read_text().strip()
    missing = [jar for jar in cp.split(os.pathsep) if not Path(jar).exists()]
    if missing:
        raise ReferenceUnavailable(f"{len(missing)} jars of the classpath are gone, e.g. {missing[0]}")
    return cp


def java() -> str:
    exe = JAVA_HOME / "bin" / "java"
    if not exe.exists():
        raise ReferenceUnavailable(f"no Java at {exe} (KAFKA_REFERENCE_JAVA_HOME)")
    return str(exe)


class PortLease:
    """A loopback port that binds now and that no other lease on this machine holds (a lock file)."""

    def __init__(self) -> None:
        PORT_LOCKS.mkdir(exist_ok=True)
        for _ in range(50):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            lock = open(PORT_LOCKS / f"{port}.lock", "w")  # noqa: SIM115 - held until release()
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                continue
            self.port, self._lock = port, lock
            return
        raise RuntimeError("no free loopback port could be leased")

    def release(self) -> None:
        self._lock.close()


class KafkaReference:
    """One Apache Kafka node (KRaft, broker+controller) in a child JVM, for comparison with kafkito."""

    def __init__(
        self,
        props: Mapping[str, str] = COMPARED_PROPS,
        java_options: tuple[str, ...] = JVM_OPTIONS,
        sasl: bool = False,
    ):
        self.props = dict(props)
        self.sasl = sasl
        self.sasl_port = 0
        self.java_options = java_options
        self.dir = Path(tempfile.mkdtemp(prefix="kafka-reference-"))
        self.log_path = self.dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.cluster_id = _cluster_id()
        self._leases: list[PortLease] = []
        self.port = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0, attempts: int = 3) -> Self:
        cp, exe = classpath(), java()
        for attempt in range(attempts):
            try:
                self._start_once(cp, exe, timeout)
                return self
            except _PortTaken:
                self._stop_process()
                if attempt == attempts - 1:
                    raise
        return self

    def _start_once(self, cp: str, exe: str, timeout: float) -> None:
        self._release_ports()
        broker, controller = PortLease(), PortLease()
        self._leases = [broker, controller]
        self.port = broker.port
        if self.sasl:
            self._leases.append(PortLease())
            self.sasl_port = self._leases[-1].port
        attempt_dir = self.dir / f"node-{broker.port}"
        config = self._write_config(attempt_dir, broker.port, controller.port)
        self.log_path = attempt_dir / "server.log"
        (attempt_dir / "log4j2.properties").write_text(LOG4J2.format(log=self.log_path))
        jvm = [exe, *self.java_options, f"-Dlog4j2.configurationFile={attempt_dir / 'log4j2.properties'}"]
        jvm += ["-cp", cp]
        formatted = subprocess.run(
            [*jvm, STORAGE_TOOL, "format", "-t", self.cluster_id, "-c", str(config), "--ignore-formatted"],
            capture_output=True,
            timeout=60,
        )
        if formatted.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed: {formatted.stdout!r} {formatted.stderr!r}")
        out = open(attempt_dir / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen([*jvm, BROKER_MAIN, str(config)], stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self._wait_ready(timeout)

    def _write_config(self, node_dir: Path, port: int, controller_port: int) -> Path:
        node_dir.mkdir(parents=True)
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(node_dir / "logs"),
            **(self._sasl_props() if self.sasl else {}),
            **self.props,
        }
        path = node_dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return path

    def _sasl_props(self) -> dict[str, str]:
        """A SASL_PLAINTEXT listener beside PLAINTEXT, SCRAM users from AlterUserScramCredentials."""
        scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        return {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self._leases[1].port},"
            f"SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,"
            "SASL_PLAINTEXT:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": scram,
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": scram,
        }

    def _wait_ready(self, timeout: float) -> None:
        from tests.support.wire import WireClient  # the codec is loaded only when a Kafka starts

        def answers_metadata() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise _PortTaken() if self._lost_port_race() else RuntimeError(self._failure("exited"))
            try:
                with WireClient(self.bootstrap, timeout=2.0) as c:
                    brokers = c.request(3, 12, topics=[], allow_auto_topic_creation=False).brokers
                    return len(brokers) == 1
            except OSError:
                return False

        try:
            wait_until(answers_metadata, timeout, "the reference Kafka to answer Metadata")
        except AssertionError:
            raise RuntimeError(self._failure(f"did not answer Metadata in {timeout} s")) from None

    def _lost_port_race(self) -> bool:
        return self.log_path.exists() and "Address already in use" in self.log_path.read_text()

    def _failure(self, what: str) -> str:
        log = self.log_path.read_text()[-4000:] if self.log_path.exists() else ""
        stdout_path = self.log_path.parent / "stdout.log"
        stdout = stdout_path.read_text()[-2000:] if stdout_path.exists() else ""
        return f"the reference Kafka {what}; log:\n{log}\nstdout:\n{stdout}"

    def _stop_process(self, grace: float = 5.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None

    def _release_ports(self) -> None:
        for lease in self._leases:
            lease.release()
        self._leases = []

    def stop(self) -> None:
        """SIGTERM, SIGKILL after a few seconds, then its ports and directory are given back."""
        self._stop_process()
        self._release_ports()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _PortTaken(Exception):
    """Another process bound one of the leased ports between the bind test and Kafka's bind."""


def measure_start() -> float:
    """Seconds from a cold JVM (storage formatting included) to the first answered Metadata."""
    began = time.monotonic()
    ref = KafkaReference().start()
    took = time.monotonic() - began
    ref.stop()
    return took


if __name__ == "__main__":  # `python -m tests.support.kafka_reference`: the start time, BENCHMARKS.md
    runs = [measure_start() for _ in range(3)]
    print(f"reference Kafka start (format + JVM + first Metadata): {', '.join(f'{r:.2f} s' for r in runs)}")
