"""The data source's Kafka side against a real kafkito: discovery, offsets, reads, data loss, produce."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from kafkito_spark.client import KafkaView, RangeReader, RecordProducer, record_columns
from kafkito_spark.errors import KafkaDataLossError
from kafkito_spark.offsets import OffsetRange
from kafkito_spark.options import Subscription


def produce(bootstrap: str, topic: str, partition: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    for i in range(count):
        producer.produce(
            topic, key=b"k%d" % i, value=b"v%d" % i, partition=partition, headers=[("n", b"%d" % i)]
        )
    assert producer.flush(30) == 0


def read(bootstrap: str, rng: OffsetRange, fail_on_data_loss: bool = True) -> list[int]:
    reader = RangeReader(
        {"bootstrap.servers": bootstrap}, rng, fail_on_data_loss=fail_on_data_loss, poll_timeout_ms=30_000
    )
    return [m.offset() for batch in reader.messages() for m in batch]  # type: ignore[misc]


def test_view_finds_partitions_by_list_pattern_and_assignment(
    bootstrap: str, new_topic: Callable[..., str]
) -> None:
    a, b = new_topic(2, suffix="-view"), new_topic(1, suffix="-view")
    view = KafkaView({"bootstrap.servers": bootstrap})
    assert view.partitions(Subscription("subscribe", topics=(a, "no-such-topic"))) == [(a, 0), (a, 1)]
    pattern = Subscription("subscribePattern", pattern=f"{a[:-7]}.*-view")
    assert view.partitions(pattern) == sorted([(a, 0), (a, 1), (b, 0)])
    assert view.partitions(Subscription("assign", assigned=((b, 0),))) == [(b, 0)]


def test_range_reader_returns_exactly_the_range_in_order(
    bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    produce(bootstrap, topic, 0, 2_500)
    view = KafkaView({"bootstrap.servers": bootstrap})
    assert view.earliest([(topic, 0)]) == {(topic, 0): 0}
    assert view.latest([(topic, 0)]) == {(topic, 0): 2_500}
    assert read(bootstrap, OffsetRange(topic, 0, 3, 2_497)) == list(range(3, 2_497))
    assert read(bootstrap, OffsetRange(topic, 0, 2_499, 2_500)) == [2_499]


def test_records_become_sparks_kafka_columns(bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(1)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(
        topic, key=None, value=b"x", timestamp=1_700_000_000_123, headers=[("a", b"1"), ("b", None)]
    )
    producer.produce(topic, key=b"k", value=None, timestamp=1_700_000_000_456)
    assert producer.flush(30) == 0
    reader = RangeReader(
        {"bootstrap.servers": bootstrap},
        OffsetRange(topic, 0, 0, 2),
        fail_on_data_loss=True,
        poll_timeout_ms=30_000,
    )
    messages = [m for batch in reader.messages() for m in batch]
    cols = record_columns(messages, include_headers=True)
    assert cols == {
        "key": [None, b"k"],
        "value": [b"x", None],
        "topic": [topic, topic],
        "partition": [0, 0],
        "offset": [0, 1],
        "timestamp": [1_700_000_000_123_000, 1_700_000_000_456_000],
        "timestampType": [0, 0],
        "headers": [[{"key": "a", "value": b"1"}, {"key": "b", "value": None}], None],
    }


def test_deleted_offsets_fail_the_read_unless_data_loss_is_allowed(
    bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    produce(bootstrap, topic, 0, 10)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_records([TopicPartition(topic, 0, 5)])[TopicPartition(topic, 0, 5)].result(30)
    with pytest.raises(KafkaDataLossError, match="failOnDataLoss"):
        read(bootstrap, OffsetRange(topic, 0, 0, 10))
    assert read(bootstrap, OffsetRange(topic, 0, 0, 10), fail_on_data_loss=False) == list(range(5, 10))
    assert read(bootstrap, OffsetRange(topic, 0, 2, 4), fail_on_data_loss=False) == []


def test_record_producer_reports_delivery_failures(bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(1)
    producer = RecordProducer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"v", key=b"k", headers=[("h", b"1")])
    producer.flush(30)
    assert producer.sent == 1
    bad = RecordProducer({"bootstrap.servers": bootstrap, "message.timeout.ms": 3000})
    bad.produce(topic, b"v", partition=7)  # the topic has one partition
    with pytest.raises(Exception, match=r"(?i)partition"):
        bad.flush(30)
