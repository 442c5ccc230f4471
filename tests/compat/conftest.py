"""Compat fixtures: the brokers, the client drivers, and the matrix written to COMPATIBILITY.md (by
`make compat`; any other run writes it under pytest's temporary directory)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.compat.clients.base import Driver
from tests.compat.matrix import FrameworkResults, Matrix
from tests.support.artifacts import COMPAT_MATRIX_ENV, output_path
from tests.support.brokers import ProcessBroker

MATRIX_NAME = "COMPATIBILITY.md"
_MATRIX = pytest.StashKey[Matrix]()
_MATRIX_FILE = pytest.StashKey[Path]()

# Scenarios other than the cross-client group run with no initial rebalance delay, to stay fast.
FAST_GROUPS = {"group.initial.rebalance.delay.ms": 0}


DRIVERS = {
    "kafka-python": "kafka_python_client:KafkaPythonDriver",
    "confluent-kafka": "confluent_client:ConfluentDriver",
    "aiokafka": "aiokafka_client:AIOKafkaDriver",
    "kcat": "kcat_client:KcatDriver",
    "KafkaJS": "kafkajs_client:KafkaJSDriver",
    "kafka-clients": "java_client:JavaDriver",
    "franz-go": "franzgo_client:FranzGoDriver",
}


ALL_CLIENTS = list(DRIVERS)


def make_drivers(names: list[str]) -> list[Driver]:
    out = []
    for n in names:
        module, cls = DRIVERS[n].split(":")
        out.append(getattr(importlib.import_module(f"tests.compat.clients.{module}"), cls)())
    return out


def selected_clients() -> list[str]:
    """All of them, or those named in KAFKITO_COMPAT_CLIENTS (comma-separated, for quick local runs; the
    matrix file is then not written)."""
    raw = os.environ.get("KAFKITO_COMPAT_CLIENTS", "").strip()
    if not raw:
        return ALL_CLIENTS
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = set(names) - set(ALL_CLIENTS)
    assert not unknown, f"unknown clients {unknown}; known: {ALL_CLIENTS}"
    return names


def matrix_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the matrix goes: $KAFKITO_COMPAT_MATRIX (`make compat`: the checked-in COMPATIBILITY.md),
    else this session's temporary directory, so that `make test` leaves the checkout as it was."""
    return output_path(COMPAT_MATRIX_ENV, tmp_path_factory.getbasetemp() / MATRIX_NAME)


@pytest.fixture(scope="session")
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    m = request.config.stash.get(_MATRIX, None)
    if m is None:
        m = request.config.stash[_MATRIX] = Matrix()
        request.config.stash[_MATRIX_FILE] = matrix_file(tmp_path_factory)
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
    """Write the matrix (`matrix_file`) when this run filled every cell of it (a partial run, e.g. with
    -k or KAFKITO_COMPAT_CLIENTS, leaves the file alone), with the frameworks table from the outcomes
    of the framework tests that ran in the same session (`make compat` runs them)."""
    m = session.config.stash.get(_MATRIX, None)
    if m is None or not m.cells:
        return
    target = session.config.stash[_MATRIX_FILE]
    missing = m.missing(ALL_CLIENTS)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if missing:
        if reporter is not None:
            reporter.write_line(
                f"compat: partial run ({len(missing)} cells not run), {target.name} left as is"
            )
        return
    stats = reporter.stats if reporter is not None else {}
    target.write_text(m.render(frameworks=FrameworkResults.from_stats(stats)))
    if reporter is not None:
        reporter.write_line(f"compat: wrote {target}")
