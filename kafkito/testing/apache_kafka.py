"""Apache Kafka 4.4 for `pytest --kafkito-target=kafka`: one KRaft node (broker and controller) on
127.0.0.1, run from Maven Central's jars in a JVM of the machine's Java (17 or newer).

The jars are resolved once by Maven from a small pom written to the cache folder
(`$XDG_CACHE_HOME/kafkito/apache-kafka-4.4.0`, else `~/.cache/...`) into `~/.m2`, and their classpath
is kept there; later runs read it and start at once. `ApacheKafka(props).start()` formats a temporary
storage directory with Kafka's StorageTool, starts `kafka.Kafka`, waits until it answers, and
`stop()` stops it (SIGTERM, SIGKILL after a few seconds) and removes the directory.
"""

from __future__ import annotations

import base64
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

KAFKA_VERSION = "4.4.0"
_POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.kafkito.testing</groupId>
  <artifactId>apache-kafka</artifactId>
  <version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
      <version>{kafka}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId>
      <version>2.0.16</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId>
      <version>2.24.3</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId>
      <version>2.24.3</version></dependency>
  </dependencies>
</project>
"""
_LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
"""
# A test broker handles little: a small heap and the quick JIT tier start it sooner.
JVM_OPTIONS = ("-Xmx512m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
# What one node needs (replication factors and ISRs of 1), and kafkito's fixture default.
DEFAULT_PROPS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}


class KafkaUnavailable(RuntimeError):
    """Apache Kafka cannot run here: no Java, no Maven to fetch the jars, or they cannot be fetched."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkito" / f"apache-kafka-{KAFKA_VERSION}"


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    exe = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if exe is None or not Path(exe).exists():
        raise KafkaUnavailable("--kafkito-target=kafka needs Java 17 or newer (java on PATH, or JAVA_HOME)")
    return exe


def classpath() -> str:
    """The jars of Kafka's broker, resolved by Maven on first use and remembered in the cache folder."""
    folder = cache_dir()
    saved = folder / "classpath.txt"
    if saved.exists():
        cp = saved.read_text().strip()
        if all(Path(jar).exists() for jar in cp.split(os.pathsep)):
            return cp
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable("--kafkito-target=kafka fetches Kafka's jars with Maven: no mvn on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pom.xml").write_text(_POM.format(kafka=KAFKA_VERSION))
    goal = ["dependency:build-classpath", f"-Dmdep.outputFile={saved}"]
    offline = subprocess.run([mvn, "-q", "-B", "-o", *goal], cwd=folder, capture_output=True, text=True)
    if offline.returncode != 0:  # not everything in ~/.m2 yet
        online = subprocess.run([mvn, "-q", "-B", *goal], cwd=folder, capture_output=True, text=True)
        if online.returncode != 0:
            detail = online.stdout[-3000:]
            raise KafkaUnavailable(f"Maven could not resolve Apache Kafka {KAFKA_VERSION}:\n{detail}")
    return saved.read_text().strip()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_id() -> str:
    while True:  # one starting with '-' reads as an option to the StorageTool
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class ApacheKafka:
    """One Apache Kafka node in a child JVM; `bootstrap_servers` once started."""

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        self.props = {**DEFAULT_PROPS, **(props or {})}
        self.dir = Path(tempfile.mkdtemp(prefix="kafkito-target-kafka-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0, attempts: int = 3) -> Self:
        cp, exe = classpath(), java()
        for _attempt in range(attempts):
            if self._start_once(cp, exe, timeout):
                return self
            self._stop_process()  # lost a port to another process between the bind test and Kafka's
        raise KafkaUnavailable(f"Apache Kafka did not start in {attempts} attempts: {self._log_tail()}")

    def _start_once(self, cp: str, exe: str, timeout: float) -> bool:
        self.port, controller = _free_port(), _free_port()
        node = self.dir / f"node-{self.port}"
        node.mkdir(parents=True)
        config = node / "server.properties"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(node / "logs"),
            **self.props,
        }
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.log = node / "server.log"
        (node / "log4j2.properties").write_text(_LOG4J2.format(log=self.log))
        jvm = [exe, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={node / 'log4j2.properties'}", "-cp", cp]
        fmt = [*jvm, "kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", str(config)]
        formatted = subprocess.run(fmt, capture_output=True, timeout=120)
        if formatted.returncode != 0:
            raise KafkaUnavailable(f"kafka-storage format failed: {formatted.stdout!r} {formatted.stderr!r}")
        with open(node / "stdout.log", "ab") as out:
            command = [*jvm, "kafka.Kafka", str(config)]
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        return self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> bool:
        """True once it answers Metadata; False if it lost its port; raises if it failed otherwise."""
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                if "Address already in use" in self._log_tail():
                    return False
                raise KafkaUnavailable(f"Apache Kafka exited: {self._log_tail()}")
            try:
                admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, request_timeout_ms=5000)
            except KafkaError:
                time.sleep(0.2)  # polling a starting JVM: nothing to wait on but its port
                continue
            try:
                if admin.describe_cluster()["brokers"]:
                    return True
            except KafkaError:
                pass
            finally:
                admin.close()
        raise KafkaUnavailable(f"Apache Kafka did not answer within {timeout} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        log = getattr(self, "log", None)
        return log.read_text()[-3000:] if log is not None and log.exists() else ""

    def _stop_process(self, grace: float = 5.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        self._stop_process()
        shutil.rmtree(self.dir, ignore_errors=True)
