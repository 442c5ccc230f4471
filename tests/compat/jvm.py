"""The Java client (kafka-clients 4.4) for the matrix and tests/java_admin: one long-lived JVM running
the driver of tests/kafka_reference/src/main/java/io/kafkito/compat, built by `make install-clients`.

Commands are JSON lines on the JVM's stdin, answered by id; commands run concurrently in the JVM. A
consumer started there reports its events as lines naming it, handed to the callback given at its start.
The JVM starts on first use and is shared by the whole test process (its start costs ~1 s of a core).
"""

from __future__ import annotations

import atexit
import itertools
import json
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.kafka_reference import PROJECT, ReferenceUnavailable, classpath, java

JAR = PROJECT / "target" / "kafka-reference-1.jar"
MAIN = "io.kafkito.compat.Main"
TIMEOUT_S = 90.0  # a safety net for a hung client on a busy machine, never a performance threshold
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p [%t] %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
"""

Event = dict[str, Any]


class JavaError(Exception):
    """A command the Java client failed: `error_class` is the exception a Java user would catch."""

    def __init__(self, op: str, error_class: str, message: str, trace: str) -> None:
        super().__init__(f"{op}: {error_class}: {message}")
        self.error_class, self.message, self.trace = error_class, message, trace


class _Pending:
    __slots__ = ("answer", "done")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Event = {}


class JavaClients:
    """The driver JVM: `call(op, **args)` runs one command and returns its result."""

    def __init__(self) -> None:
        jar = JAR
        if not jar.exists():
            raise ReferenceUnavailable(f"{jar} is missing: run `make install-clients`")
        self.dir = Path(tempfile.mkdtemp(prefix="kafkito-java-clients-"))
        self.log_path = self.dir / "clients.log"
        (self.dir / "log4j2.properties").write_text(LOG4J2.format(log=self.log_path))
        argv = [java(), *JVM_OPTIONS, f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}"]
        argv += ["-cp", f"{jar}:{classpath()}", MAIN]
        self._stderr = open(self.dir / "stderr.log", "wb")  # noqa: SIM115 - the child's, closed at close()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._listeners: dict[str, Callable[[Event], None]] = {}
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, name="java-clients", daemon=True)
        self._reader.start()
        if not self._ready.wait(TIMEOUT_S):
            raise RuntimeError(f"the Java client driver did not start:\n{self.tail()}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            event: Event = json.loads(line)
            if "ready" in event:
                self._ready.set()
            elif "id" in event:
                with self._lock:
                    pending = self._pending.pop(int(event["id"]), None)
                if pending is not None:
                    pending.answer = event
                    pending.done.set()
            elif "consumer" in event:
                with self._lock:
                    listener = self._listeners.get(event["consumer"])
                if listener is not None:
                    listener(event)
        with self._lock:  # the JVM is gone: fail whoever waits
            for pending in self._pending.values():
                pending.answer = {"ok": False, "errorClass": "JvmExited", "error": self.tail(), "trace": ""}
                pending.done.set()
            self._pending.clear()

    def call(self, op: str, timeout: float = TIMEOUT_S, **args: Any) -> Any:
        """Run `op` in the JVM; its result, or JavaError with the exception the client threw."""
        pending = _Pending()
        with self._lock:
            ident = next(self._ids)
            self._pending[ident] = pending
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"id": ident, "op": op, **args}).encode() + b"\n")
            self.proc.stdin.flush()
        if not pending.done.wait(timeout):
            raise AssertionError(f"the Java client did not answer {op} within {timeout} s:\n{self.tail()}")
        answer = pending.answer
        if not answer.get("ok"):
            raise JavaError(op, answer["errorClass"], answer["error"], answer.get("trace", ""))
        return answer["result"]

    def listen(self, key: str, listener: Callable[[Event], None]) -> None:
        with self._lock:
            self._listeners[key] = listener

    def forget(self, key: str) -> None:
        with self._lock:
            self._listeners.pop(key, None)

    def tail(self, lines: int = 40) -> str:
        parts = []
        for path in (self.dir / "stderr.log", self.log_path):
            if path.exists():
                parts.append("\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(parts)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the driver stops its consumers, closes its clients and exits
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


_shared: JavaClients | None = None
_shared_lock = threading.Lock()


def java_clients() -> JavaClients:
    """The test process's one driver JVM, started on first use and closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.proc.poll() is not None:
            _shared = JavaClients()
            atexit.register(_shared.close)
        return _shared
