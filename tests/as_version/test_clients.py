"""Real clients produce and consume through a broker pinned to Kafka 2.8 and to 3.9: each negotiates
the versions the pinned broker advertises (a version above them would close its connection)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from kafkito.testing import KafkitoHandle, start
from tests.compat.clients.base import Driver, wait_for_consumers
from tests.compat.conftest import DRIVERS
from tests.compat.records import assert_same_records, sample_records
from tests.support.admin import create_topic

RELEASES = ("2.8", "3.9")
CLIENTS = ("kafka-python", "confluent-kafka", "kafka-clients", "franz-go")


@pytest.fixture(scope="module", params=RELEASES)
def pinned(request: pytest.FixtureRequest) -> Iterator[KafkitoHandle]:
    handle = start(as_version=request.param, log_level="warning")
    yield handle
    handle.stop()


def driver(name: str) -> Driver:
    module, cls = DRIVERS[name].split(":")
    made: Driver = getattr(importlib.import_module(f"tests.compat.clients.{module}"), cls)()
    return made


@pytest.mark.parametrize("client", CLIENTS)
def test_client_produces_and_consumes_through_a_pinned_broker(pinned: KafkitoHandle, client: str) -> None:
    d = driver(client)
    bootstrap = pinned.bootstrap_servers
    topic = f"as-version-{client}"
    create_topic(bootstrap, topic, partitions=1)  # franz-go does not create topics by producing
    recs = sample_records(20, 1, d.style)
    d.produce(bootstrap, topic, recs, "none")
    reader = d.reader(bootstrap, topic, 1, "earliest").start()
    try:
        wait_for_consumers(lambda: len(reader.feed.records) >= len(recs), "every record", [reader])
    finally:
        reader.stop()
    assert_same_records(recs, reader.feed.records)
