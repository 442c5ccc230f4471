"""Compat fixtures: the brokers, the client drivers, and the matrix written to COMPATIBILITY.md."""

from __future__ import annotations

import importlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.compat.clients.base import Driver
from tests.compat.matrix import Matrix
from tests.support.brokers import ProcessBroker

ROOT = Path(__file__).resolve().parents[2]
MATRIX_FILE = ROOT / "COMPATIBILITY.md"
_MATRIX = pytest.StashKey[Matrix]()

# Scenarios other than the cross-client group run with no initial rebalance delay, to stay fast.
FAST_GROUPS = {"group.initial.rebalance.delay.ms": 0}


DRIVERS = {
    "kafka-python": "kafka_python_client:KafkaPythonDriver",
    "confluent-kafka": "confluent_client:ConfluentDriver",
    "aiokafka": "aiokafka_client:AIOKafkaDriver",
    "kcat": "kcat_client:KcatDriver",
    "KafkaJS": "kafkajs_client:KafkaJSDriver",
}


ALL_CLIENTS = list(DRIVERS)


def make_drivers(names: list[str]) -> list[Driver]:
    out = []
    for n in names:
        module, cls = DRIVERS[n].split(":")
        out.append(getattr(importlib.import_module(f"tests.compat.clients.{module}"), cls)())
    return out


def selected_clients() -> list[str]:
    """All five, or those named in KAFKITO_COMPAT_CLIENTS (comma-separated, for quick local runs; the
    matrix file is then not written)."""
    raw = os.environ.get("KAFKITO_COMPAT_CLIENTS", "").strip()
    if not raw:
        return ALL_CLIENTS
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = set(names) - set(ALL_CLIENTS)
    assert not unknown, f"unknown clients {unknown}; known: {ALL_CLIENTS}"
    return names


@pytest.fixture(scope="session")
def matrix(request: pytest.FixtureRequest) -> Matrix:
    m = request.config.stash.get(_MATRIX, None)
    if m is None:
        m = request.config.stash[_MATRIX] = Matrix()
    return m


@pytest.fixture(scope="session")
def drivers(matrix: Matrix) -> list[Driver]:
    out = make_drivers(selected_clients())
    for d in out:
        matrix.add_client(d.name, d.version)
    return out


@pytest.fixture(scope="session")
def compat_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessBroker]:
    """One `kafkito serve` process for the scenarios that do not restart it: no initial rebalance delay."""
    broker = ProcessBroker(tmp_path_factory.mktemp("compat") / "data", props=FAST_GROUPS).start()
    yield broker
    broker.kill()


@pytest.fixture(scope="session")
def default_delay_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessBroker]:
    """A broker with Kafka's default group.initial.rebalance.delay.ms (3000)."""
    broker = ProcessBroker(tmp_path_factory.mktemp("compat-delay") / "data").start()
    yield broker
    broker.kill()


@pytest.fixture
def restartable_broker(tmp_path: Path) -> Iterator[ProcessBroker]:
    broker = ProcessBroker(tmp_path / "data", props=FAST_GROUPS).start()
    yield broker
    broker.kill()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed scenario shows the end of its broker's log (group and offset events are logged there)."""
    report: pytest.TestReport = yield
    if report.when == "call" and report.failed:
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, ProcessBroker) and value.log_path.exists():
                tail = value.log_path.read_text(errors="replace").splitlines()[-80:]
                report.sections.append((f"{name} log {value.log_path}", "\n".join(tail)))
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write COMPATIBILITY.md when this run filled every cell of the matrix (a partial run, e.g. with
    -k or KAFKITO_COMPAT_CLIENTS, leaves the file alone)."""
    m = session.config.stash.get(_MATRIX, None)
    if m is None or not m.cells:
        return
    missing = m.missing(ALL_CLIENTS)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if missing:
        if reporter is not None:
            reporter.write_line(
                f"compat: partial run ({len(missing)} cells not run), {MATRIX_FILE.name} left as is"
            )
        return
    MATRIX_FILE.write_text(m.render())
    if reporter is not None:
        reporter.write_line(f"compat: wrote {MATRIX_FILE}")
