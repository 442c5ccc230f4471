"""Shared fixtures: a real kafkito broker on an ephemeral port, in-thread or as a process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.config import Config
from kafkito.broker.logs import configure_logging
from tests.support.brokers import ProcessBroker, ThreadBroker

configure_logging("info", "console")


def make_config(data_dir: Path, **props: Any) -> Config:
    config = Config(host="127.0.0.1", port=0, log_dirs=str(data_dir))
    for name, value in props.items():
        config.set(name.replace("_", "."), str(value))
    return config


@pytest.fixture
def broker_factory(tmp_path: Path) -> Iterator[Callable[..., ThreadBroker]]:
    """Start brokers with Kafka properties given as keyword args (dots written as underscores)."""
    started: list[ThreadBroker] = []

    def start(data_dir: Path | None = None, **props: Any) -> ThreadBroker:
        d = data_dir or tmp_path / f"data{len(started)}"
        b = ThreadBroker(make_config(d, **props)).start()
        started.append(b)
        return b

    yield start
    for b in started:
        b.stop()


@pytest.fixture
def broker(broker_factory: Callable[..., ThreadBroker]) -> ThreadBroker:
    """A broker with Kafka's defaults, except no initial rebalance delay, on an ephemeral port."""
    return broker_factory(group_initial_rebalance_delay_ms=0)


@pytest.fixture
def broker_process(tmp_path: Path) -> Iterator[Callable[..., ProcessBroker]]:
    """Start `kafkito serve` processes (for SIGKILL and restart tests)."""
    procs: list[ProcessBroker] = []

    def start(data_dir: Path | None = None, **props: Any) -> ProcessBroker:
        p = ProcessBroker(
            data_dir or tmp_path / "pdata", props={k.replace("_", "."): v for k, v in props.items()}
        )
        procs.append(p.start())
        return p

    yield start
    for p in procs:
        p.kill()
