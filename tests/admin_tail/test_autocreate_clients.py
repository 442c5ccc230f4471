"""Every client of the compat matrix produces to a topic that does not exist yet: the broker
auto-creates it, answers the first Metadata with UNKNOWN_TOPIC_OR_PARTITION as Kafka 4 does, the client asks
again and its records land, byte for byte."""

from __future__ import annotations

import pytest

from tests.compat import reference as ref
from tests.compat.conftest import make_drivers
from tests.compat.records import assert_same_records, sample_records
from tests.support.brokers import ThreadBroker


# KafkaJS is left out: the compat driver's producer turns auto creation off (allowAutoTopicCreation).
@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka", "kcat"])
def test_produce_to_an_auto_created_topic(broker: ThreadBroker, client: str) -> None:
    (driver,) = make_drivers([client])
    topic = f"auto-{client.lower().replace('-', '')}"
    recs = sample_records(10, 1, driver.style)
    driver.produce(broker.bootstrap, topic, recs, "none")
    stored = ref.read_all(broker.bootstrap, topic, 1)
    assert_same_records(recs, [s.got for s in stored])
