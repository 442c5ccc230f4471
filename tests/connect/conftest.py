"""Fixtures of the Kafka Connect tests: Connect's classpath (Maven, once a session), a kafkito broker
as a child process (restarted by a test), and workers started and always stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.connect.workers import ConnectWorker, build, worker_properties
from tests.support.brokers import ProcessBroker


@pytest.fixture(scope="session")
def connect_classpath() -> str:
    return build()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[ProcessBroker]:
    b = ProcessBroker(tmp_path / "data", props={"group.initial.rebalance.delay.ms": "0"}).start()
    yield b
    b.stop()


@pytest.fixture
def workers(connect_classpath: str, tmp_path: Path) -> Iterator[Callable[..., ConnectWorker]]:
    """Start a worker of group `group` (connect protocol `protocol`) against `bootstrap`."""
    started: list[ConnectWorker] = []

    def start(bootstrap: str, protocol: str, group: str = "connect") -> ConnectWorker:
        props = worker_properties(bootstrap, group, protocol)
        worker = ConnectWorker(connect_classpath, props, tmp_path / f"worker{len(started)}")
        started.append(worker)
        return worker.start()

    yield start
    for worker in started:
        worker.stop()
