"""1,000 records with keys, values, headers and timestamps come back byte-identical through another client."""

from __future__ import annotations

import pytest

from tests.support.brokers import ThreadBroker

from .clients import CONSUMERS, PRODUCERS, counts, layout, produce_confluent, sample_records

N = 1000
PARTITIONS = 3
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # in the order of their attribute bits

# Every client produces once and is read back by a different one.
PAIRS = [
    ("kafka-python", "confluent-kafka"),
    ("confluent-kafka", "aiokafka"),
    ("aiokafka", "kafka-python"),
]


def assert_stored_codec(broker: ThreadBroker, topic: str, codec: int) -> None:
    """The topic's batches are stored as sent: compressed with `codec`. Clients send a batch uncompressed
    when compressing does not shrink it (a lone small record), so a few plain batches may be among them."""

    def codecs() -> list[int]:
        logs = broker.broker.logs  # type: ignore[union-attr]
        info = logs.topic(topic)
        assert info is not None
        return [h.compression for p in range(info.partitions) for h in logs.get_log(topic, p).batch_headers()]

    stored = broker.call(codecs)
    assert set(stored) <= {0, codec}
    assert stored.count(codec) * 2 > len(stored), f"most batches use codec {codec}: {stored}"


@pytest.mark.parametrize(("producer", "consumer"), PAIRS, ids=[f"{p}-to-{c}" for p, c in PAIRS])
def test_records_round_trip_between_clients(broker: ThreadBroker, producer: str, consumer: str) -> None:
    topic = f"rt-{producer}"
    recs = sample_records(N, PARTITIONS)
    broker.call(lambda: broker.broker.logs.create_topic(topic, PARTITIONS))  # type: ignore[union-attr]
    PRODUCERS[producer](broker.bootstrap, topic, recs)
    got = CONSUMERS[consumer](broker.bootstrap, topic, counts(recs))
    assert got == layout(recs)


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_compressed_batches_read_by_kafka_python(broker: ThreadBroker, codec: str) -> None:
    topic = f"codec-{codec}"
    recs = sample_records(N, PARTITIONS, seed=hash(codec) & 0xFFFF)
    broker.call(lambda: broker.broker.logs.create_topic(topic, PARTITIONS))  # type: ignore[union-attr]
    produce_confluent(broker.bootstrap, topic, recs, compression=codec)
    # librdkafka only uses LZ4 with brokers that advertise FindCoordinator v0 (its 0.8.2 marker) and
    # silently sends uncompressed batches otherwise: the lz4 case pins that advertisement too.
    assert_stored_codec(broker, topic, CODECS.index(codec))
    got = CONSUMERS["kafka-python"](broker.bootstrap, topic, counts(recs))
    assert got == layout(recs)


@pytest.mark.parametrize(
    ("producer", "codec", "consumer"),
    [
        ("kafka-python", "zstd", "confluent-kafka"),
        ("kafka-python", "lz4", "aiokafka"),
        ("aiokafka", "snappy", "confluent-kafka"),
    ],
)
def test_python_clients_compressed_batches_read_by_confluent(
    broker: ThreadBroker, producer: str, codec: str, consumer: str
) -> None:
    topic = f"codec-{producer}-{codec}"
    recs = sample_records(N, PARTITIONS, seed=7)
    broker.call(lambda: broker.broker.logs.create_topic(topic, PARTITIONS))  # type: ignore[union-attr]
    PRODUCERS[producer](broker.bootstrap, topic, recs, codec)
    assert_stored_codec(broker, topic, CODECS.index(codec))
    got = CONSUMERS[consumer](broker.bootstrap, topic, counts(recs))
    assert got == layout(recs)
