"""A real `kafkito serve` per test module, and `kafkito` verbs run as subprocesses against it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.brokers import ProcessBroker


def kafkito(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`kafkito ARGS...` as a user runs it: its own process, exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "kafkito", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "100"},
    )


class Cli:
    """The verbs of one test module's broker (`--bootstrap-server` added)."""

    def __init__(self, broker: ProcessBroker) -> None:
        self.broker = broker
        self.bootstrap = broker.bootstrap

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return kafkito(*args, "--bootstrap-server", self.bootstrap, stdin=stdin)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self(*args, stdin=stdin)
        assert done.returncode == 0, f"kafkito {' '.join(args)}: {done.returncode}\n{done.stderr}"
        return done.stdout


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    data: Path = tmp_path_factory.mktemp("cli") / "data"
    broker = ProcessBroker(data, props={"group.initial.rebalance.delay.ms": 0}).start()
    try:
        yield Cli(broker)
    finally:
        broker.stop()
