"""Shared fixtures (a real kafkito broker on an ephemeral port, in-thread or as a process), the test
markers applied by location, and the hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from kafkito.broker.config import Config
from kafkito.broker.logging_setup import configure_logging
from tests.support.brokers import ProcessBroker, ThreadBroker

configure_logging("info", "console")

# -- hypothesis profiles ---------------------------------------------------------------------------
# `dev` (the default): new examples on every run, saved failures replayed from .hypothesis/.
# `ci`: reproducible, the same examples on every run, a bounded count where a test sets none, no
# per-example deadline on a shared machine, and the blob that replays a failure printed in the log.
# CI sets CI=true; `--hypothesis-profile NAME` overrides either way. (hypothesis itself derandomizes
# whenever a CI variable is set; `dev` says derandomize=False so that the override really is dev.)
settings.register_profile("dev", derandomize=False)
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=100,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev")

# -- markers by location ---------------------------------------------------------------------------
# `make test-fast` runs `-m "not compat and not spark and not slow"`. Whole directories and files are
# marked here rather than test by test, so that a new test in them is marked too.
TESTS = Path(__file__).resolve().parent
MARKS_BY_PATH: dict[str, str] = {
    "compat": "compat",  # the client matrix: five real clients, ~45 s
    "spark": "spark",  # the PySpark data source: a JVM and a local SparkSession
    "log/test_crash.py": "slow",  # SIGKILLs a writer process over and over
    "offsets/test_crash.py": "slow",  # 20 SIGKILLs during a commit storm
    "offsets/test_clients.py": "slow",  # real consumer groups across broker restarts
    "coordinator/test_clients_": "slow",  # real consumer groups: joins, rebalances, session timeouts
    "transactions_e2e/test_crash.py": "slow",  # SIGKILLs the broker in the middle of transactions
    "transactions_e2e/test_consume_transform_produce.py": "slow",  # real consumer groups
    "transactions_e2e/test_kafkajs.py": "slow",  # KafkaJS transactions, on node (make install-clients)
    "datapath/test_kcat.py": "slow",  # kcat, which `make install-clients` installs
    "consumer_groups_clients": "slow",  # KIP-848 confluent consumers: SIGKILL, session timeouts, restarts
    "protocol/test_error_answers_vs_kafka.py": "slow",  # Kafka 4.4's request classes on a JVM (the oracle)
    "cli/test_session.py": "slow",  # not long, but drives tmux, which `make install-clients` installs
    "admin_tail/test_autocreate_clients.py": "slow",  # four real clients, kcat among them
    "cluster/test_leader_failover.py": "slow",  # real clients while a three-node cluster's nodes stop
    "cluster/test_coordinator_moves.py": "slow",  # real consumer groups whose coordinator moves
    "cluster/test_control_topology.py": "slow",  # `kafkito serve --nodes 3` child and `kafkito control`
    "security/test_clients.py": "slow",  # three real clients over SASL_SSL and SASL_PLAINTEXT
    "security/test_kafkajs.py": "slow",  # KafkaJS (node) over SASL_SSL and SASL_PLAINTEXT
    "share_partitions/test_share_consumers.py": "slow",  # confluent ShareConsumers, one SIGKILLed
    "go_clients": "slow",  # Sarama, kafka-go and franz-go, built with Go 1.26 (make install-clients)
    "share_groups/test_clients.py": "slow",  # confluent ShareConsumers: a SIGKILLed member fenced
    "console/test_browser": "slow",  # headless chromium, which `make install-clients` installs
    "delegation_tokens/test_java_tools.py": "slow",  # kafka-tools 4.4 and a Java consumer (JVMs)
    "java_admin": "slow",  # kafka-clients 4.4's Admin in the Java driver JVM (`make install-clients`)
    "conformance": "slow",  # beside a real Kafka 4.4 on a JVM (make install-clients fetches it)
    "connect": "slow",  # Kafka Connect 4.4 workers on JVMs (Maven resolves tests/connect/pom.xml)
    "testing_docs/test_target.py": "slow",  # docs/testing.md on Apache Kafka 4.4 (Java, Maven)
    "streams_groups/test_kafka_streams.py": "slow",  # Kafka Streams 4.4 applications on JVMs, a SIGKILL
    "streams_groups/test_streams_groups_command.py": "slow",  # kafka-streams-groups.sh and Kafka 4.4 on JVMs
}
SLOW_TESTS = {  # single tests, by node id relative to tests/
    "datapath/test_durability.py::test_sigkill_under_acks1_load_loses_no_acknowledged_record",
    "broker/test_bootstrap_clients.py::test_kcat_lists_metadata",  # kcat (make install-clients)
    "cli/test_transactions_abort.py::test_kafka_transactions_sh_aborts_on_kafkito",  # kafka-tools 4.4 (JVM)
    "control/test_http_api.py::test_a_blackholed_member_is_evicted_by_an_advance_and_the_timeline_tells_it",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
        for prefix, mark in MARKS_BY_PATH.items():
            if where.startswith(prefix):
                item.add_marker(mark)
        if f"{where}::{item.name.split('[')[0]}" in SLOW_TESTS:
            item.add_marker("slow")


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
