"""A `kafkito serve --http` child process, a urllib client of its console, and real consumers."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.brokers import ProcessBroker
from tests.support.kafka_python import subscribe
from tests.support.net import free_port


class ConsoleBroker(ProcessBroker):
    """`kafkito serve --http 127.0.0.1:PORT` as a child, on free ports."""

    def __init__(
        self,
        data_dir: Path,
        *extra: str,
        control_same_port: bool = False,
        props: dict[str, Any] | None = None,
    ) -> None:
        self.http_port = free_port()
        args = ["--http", f"127.0.0.1:{self.http_port}", *extra]
        if control_same_port:
            args += ["--control", f"127.0.0.1:{self.http_port}"]
        props = {"group.initial.rebalance.delay.ms": 0, **(props or {})}
        super().__init__(data_dir, props=props, args=args, also_wait=[self.http_port])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request; any status is returned with its body (JSON decoded when it is JSON)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, raw, kind = response.status, response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as exc:
            status, raw, kind = exc.code, exc.read(), exc.headers.get_content_type()
        return status, json.loads(raw) if kind == "application/json" else raw.decode()

    def get(self, path: str) -> Any:
        status, body = self.call("GET", path)
        assert status == 200, (path, status, body)
        return body


Record = tuple[bytes | None, bytes, list[tuple[str, bytes]]]  # key, value, headers


def produce(bootstrap: str, topic: str, records: list[Record]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    try:
        for key, value, headers in records:
            producer.send(topic, key=key, value=value, headers=headers)
        producer.flush(30)
    finally:
        producer.close(5)


def wait_until(check: Callable[[], bool], timeout_s: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class PollingConsumer:
    """A kafka-python group member in a thread, polling (so it heartbeats and rejoins) until closed;
    it commits only when told (`commit_up_to`).

    The poll loop never dies: kafka-python refuses a commit made while its member rebalances
    (RebalanceInProgressError, CommitFailedError after ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS),
    and a thread ended by that would leave a member that nothing polls, so it never rejoins and the
    group loses it. A Kafka error is kept in `errors` and polling goes on: the next poll rejoins.
    A requested commit waits until the member is stable and holds partitions, and is made again
    after a refusal; `close()` ends the loop and leaves the group (LeaveGroup)."""

    POLL_MS = 100
    COMMIT_TIMEOUT_MS = 5000  # a commit that cannot be made in time is made again on a later turn

    def __init__(self, bootstrap: str, group: str, topic: str, client_id: str) -> None:
        from kafka import KafkaConsumer

        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
            enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=1,
            session_timeout_ms=10000, heartbeat_interval_ms=300,
        )  # fmt: skip
        subscribe(self.consumer, [topic])  # around two kafka-python join bugs: see the helper
        self.consumed: list[Any] = []
        self.errors: list[BaseException] = []  # what kafka-python raised; the loop went on
        self._wanted: int | None = None  # the offset to commit, until a commit of it succeeds
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"member-{client_id}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from kafka.errors import KafkaError

        try:
            while not self._stop.is_set():
                try:
                    self._poll_and_commit()
                except KafkaError as exc:  # refused commit, rebalance, lost coordinator: poll again
                    self.errors.append(exc)
                    self._stop.wait(self.POLL_MS / 1000)
        except BaseException as exc:  # not a Kafka error: a bug here; kept for the test to see
            self.errors.append(exc)
            raise
        finally:
            self.consumer.close(autocommit=False)

    def _poll_and_commit(self) -> None:
        from kafka import OffsetAndMetadata
        from kafka.structs import MemberState

        for records in self.consumer.poll(timeout_ms=self.POLL_MS).values():
            self.consumed.extend(records)
        with self._lock:
            offset = self._wanted
        if offset is None or self.consumer.group_metadata().state != MemberState.STABLE:
            return
        assigned = self.consumer.assignment()
        if not assigned:
            return
        commit = {tp: OffsetAndMetadata(offset, "", -1) for tp in assigned}
        self.consumer.commit(commit, timeout_ms=self.COMMIT_TIMEOUT_MS)
        with self._lock:
            if self._wanted == offset:
                self._wanted = None

    def commit_up_to(self, offset: int) -> None:
        """Commit `offset` for the partitions this member holds (the tests' topics have one), as soon
        as it is stable and holds some; a later request replaces one not yet made."""
        with self._lock:
            self._wanted = offset

    def close(self) -> None:
        """Stop polling and leave the group; idempotent."""
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), f"{self._thread.name} did not stop: {self.errors[-3:]}"
