"""Kafka Connect 4.4 distributed workers for the tests: the classpath this folder's pom resolves (built
once by Maven, offline when ~/.m2 has it), a worker as a child JVM (`ConnectDistributed` with a
properties file, REST on loopback), its REST calls, and its SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from tests.support.kafka_reference import PortLease, ReferenceUnavailable, java
from tests.support.waiting import wait_until

PROJECT = Path(__file__).resolve().parent
CLASSPATH_FILE = PROJECT / "target" / "classpath.txt"
CONNECTORS_JAR = PROJECT / "target" / "kafka-connect-1.jar"
MAIN = "org.apache.kafka.connect.cli.ConnectDistributed"
SOURCE = "io.kafkito.connect.LineFileSource"
SINK = "io.kafkito.connect.LineFileSink"
# A worker handles a few lines: a small heap and the quick JIT tier start it sooner.
JVM_OPTIONS = ("-Xmx256m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
"""


def build() -> str:
    """The worker's classpath (the connectors' jar first), packaged by Maven when a source or the pom
    is newer than the jar: offline first, then from Maven Central."""
    sources = [PROJECT / "pom.xml", *(PROJECT / "src").rglob("*.java")]
    stale = not CONNECTORS_JAR.exists() or not CLASSPATH_FILE.exists()
    stale = stale or any(s.stat().st_mtime > CONNECTORS_JAR.stat().st_mtime for s in sources)
    if stale:
        goals = ["package", "dependency:build-classpath", f"-Dmdep.outputFile={CLASSPATH_FILE}"]
        for offline in (["-o"], []):
            done = subprocess.run(["mvn", "-q", "-B", *offline, *goals], cwd=PROJECT, capture_output=True)
            if done.returncode == 0:
                break
        else:
            raise ReferenceUnavailable(f"building tests/connect with Maven failed: {done.stdout[-2000:]!r}")
    jars = CLASSPATH_FILE.read_text().strip().split(os.pathsep)
    missing = [jar for jar in jars if not Path(jar).exists()]
    if missing:
        raise ReferenceUnavailable(f"{len(missing)} jars of Connect's classpath are gone, e.g. {missing[0]}")
    return os.pathsep.join([str(CONNECTORS_JAR), *jars])


def worker_properties(bootstrap: str, group: str, protocol: str) -> dict[str, str]:
    """A distributed worker's properties: the three internal topics with one replica, quick offset
    flushes, a session timeout and a scheduled-rebalance delay short enough for a test (a lost
    worker's tasks wait `scheduled.rebalance.max.delay.ms`, 5 minutes by default, under the
    incremental protocols)."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "connect.protocol": protocol,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.flush.interval.ms": "300",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "scheduled.rebalance.max.delay.ms": "1000",
        "plugin.discovery": "only_scan",
    }


class ConnectWorker:
    """One `ConnectDistributed` JVM with its REST listener on a leased loopback port."""

    def __init__(self, classpath: str, props: Mapping[str, str], directory: Path) -> None:
        self.classpath = classpath
        self.props = dict(props)
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._lease = PortLease()
        self.port = self._lease.port

    @property
    def worker_id(self) -> str:
        """How the status API names this worker."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> Self:
        props = {**self.props, "listeners": f"http://127.0.0.1:{self.port}"}
        config = self.dir / "worker.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.dir / "log4j2.properties").write_text(LOG4J2.format(log=self.log_path))
        cmd = [java(), *JVM_OPTIONS, f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}"]
        out = open(self.dir / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen([*cmd, "-cp", self.classpath, MAIN, str(config)], stdout=out, stderr=out)
        out.close()
        wait_until(self._serves, 90, f"the Connect worker on {self.port} to serve REST", detail=self.tail)
        return self

    def _serves(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"the Connect worker exited: {self.tail()}")
        try:
            return bool(self.get("/")["version"])
        except OSError:
            return False

    def tail(self) -> str:
        return self.log_path.read_text()[-3000:] if self.log_path.exists() else ""

    def request(self, method: str, path: str, body: object | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method)
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read()
        return json.loads(text) if text else None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def put_connector(self, name: str, config: Mapping[str, str]) -> None:
        """PUT the config, retried while the group has no leader yet (409 during a rebalance)."""

        def put() -> bool:
            try:
                self.request("PUT", f"/connectors/{name}/config", dict(config))
                return True
            except urllib.error.HTTPError as exc:
                if exc.code in (409, 500):  # rebalancing, or forwarded to a leader not yet known
                    return False
                raise

        wait_until(put, 60, f"the connector {name} to be accepted", detail=self.tail)

    def tasks(self, name: str) -> list[tuple[str, str]]:
        """(state, worker id) of each of a connector's tasks, as this worker's status store has them."""
        try:
            status = self.get(f"/connectors/{name}/status")
        except (OSError, urllib.error.HTTPError):
            return []
        return [(t["state"], t["worker_id"]) for t in status.get("tasks", [])]

    def kill(self) -> None:
        """SIGKILL: the worker leaves no LeaveGroup, flushes nothing."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._lease.release()
