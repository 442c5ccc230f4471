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
from tests.support.net import free_port


class ConsoleBroker(ProcessBroker):
    """`kafkito serve --http 127.0.0.1:PORT` as a child, on free ports."""

    def __init__(self, data_dir: Path, *extra: str, control_same_port: bool = False) -> None:
        self.http_port = free_port()
        args = ["--http", f"127.0.0.1:{self.http_port}", *extra]
        if control_same_port:
            args += ["--control", f"127.0.0.1:{self.http_port}"]
        props = {"group.initial.rebalance.delay.ms": 0}
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
    """A kafka-python consumer in a thread, polling (so it heartbeats and rejoins) until closed;
    it commits only when told (`commit_up_to`)."""

    def __init__(self, bootstrap: str, group: str, topic: str, client_id: str) -> None:
        from kafka import KafkaConsumer

        self.consumer = KafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
            enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=1,
            session_timeout_ms=10000, heartbeat_interval_ms=300,
        )  # fmt: skip
        self.consumed: list[Any] = []
        self._commit: list[int] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from kafka import OffsetAndMetadata, TopicPartition

        while not self._stop.is_set():
            for records in self.consumer.poll(timeout_ms=100).values():
                self.consumed.extend(records)
            with self._lock:
                wanted = self._commit[:]
                self._commit.clear()
            for offset in wanted:
                tp = TopicPartition(self.consumed[0].topic, self.consumed[0].partition)
                self.consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
        self.consumer.close(autocommit=False)

    def commit_up_to(self, offset: int) -> None:
        with self._lock:
            self._commit.append(offset)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
