"""Session fixtures for the Spark tests: one kafkito broker and one local[2] SparkSession."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kafkito.broker.config import Config
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def kafkito(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    """A real kafkito broker on an ephemeral port, shared by every Spark test."""
    config = Config(host="127.0.0.1", port=0, log_dirs=str(tmp_path_factory.mktemp("spark-broker")))
    config.set("group.initial.rebalance.delay.ms", "0")
    broker = ThreadBroker(config).start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def bootstrap(kafkito: ThreadBroker) -> str:
    return kafkito.bootstrap


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One small local Spark (2 cores, ~400 MB JVM) with Spark's own Kafka connector (Ivy resolves
    it, from ~/.ivy2 after `make install-spark`) and the `kafkito` source registered. `local[2,2]`:
    a failed task is tried once more, as on a cluster (the exactly-once sink's tests fail tasks)."""
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers import kafkito_spark from this venv
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import kafkito_spark
    from kafkito_spark.packages import kafka_package

    session = (
        SparkSession.builder.master("local[2,2]")
        .appName("kafkito-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.jars.packages", kafka_package())
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    kafkito_spark.register(session)
    yield session
    session.stop()


@pytest.fixture
def new_topic(bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """Create a topic named after the test (plus a counter) with the given partition count."""
    base = re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:180]
    made: list[str] = []

    def create(partitions: int = 1, suffix: str = "") -> str:
        name = f"{base}-{len(made)}{suffix}"
        create_topic(bootstrap, name, partitions)
        made.append(name)
        return name

    return create


@pytest.fixture
def checkpoint(tmp_path: Path) -> str:
    return str(tmp_path / "checkpoint")
