"""The two brokers a conformance session compares (one Kafka 4.4 and one kafkito, the same properties,
each started once per session) and the report `make conformance` asks for."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkito.broker.config import Config
from tests.conformance import framework
from tests.conformance.framework import Outcome, Scenario, run_pair
from tests.conformance.kafka_specs import api_specs
from tests.conformance.readiness import coordinators_loaded
from tests.conformance.report import RESULTS, write_report
from tests.support.brokers import ThreadBroker
from tests.support.kafka_reference import COMPARED_PROPS, KafkaReference
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

REPORT_ENV = "KAFKITO_CONFORMANCE_REPORT"  # set by `make conformance`: the file the report goes to


@dataclass(slots=True)
class Pair:
    kafka: str
    kafkito: str
    kafka_versions: dict[int, tuple[int, int]]
    kafkito_versions: dict[int, tuple[int, int]]

    def run(self, scn: Scenario) -> Outcome:
        outcome = run_pair(scn, self.kafka, self.kafkito, self.kafka_versions)
        RESULTS.append(outcome)
        return outcome


def served_versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    with WireClient(bootstrap) as c:
        answer = c.request(18, 3, client_software_name="conformance", client_software_version="1")
    return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


@pytest.fixture(scope="session")
def kafka_reference() -> Iterator[KafkaReference]:
    """Apache Kafka 4.4, one KRaft node, shared by the session's tests (unique names per test)."""
    ref = KafkaReference().start()
    yield ref
    ref.stop()


@pytest.fixture(scope="session")
def kafkito_compared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    config = Config(host="127.0.0.1", port=0, log_dirs=str(tmp_path_factory.mktemp("kafkito-compared")))
    config.update(COMPARED_PROPS)
    broker = ThreadBroker(config).start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def pair(kafka_reference: KafkaReference, kafkito_compared: ThreadBroker) -> Pair:
    framework.API_NAMES.update({k: s.name for k, s in api_specs().items()})
    kafka, kafkito = kafka_reference.bootstrap, kafkito_compared.bootstrap
    for bootstrap in (kafka, kafkito):
        wait_until(lambda b=bootstrap: coordinators_loaded(b), 60, f"the coordinators of {bootstrap}")
    return Pair(kafka, kafkito, served_versions(kafka), served_versions(kafkito))


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(REPORT_ENV)
    if target and RESULTS:
        write_report(Path(target), RESULTS)
