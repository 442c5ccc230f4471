"""`__consumer_offsets` is the broker's: clients cannot append to it or delete it; like Kafka, an all-topics
Metadata lists it (with is_internal) once it exists."""

from __future__ import annotations

from kafka.record.memory_records import MemoryRecordsBuilder

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

OFFSETS = "__consumer_offsets"


def _batch() -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16)
    builder.append(timestamp=None, key=b"k", value=b"v", headers=[])
    builder.close()
    return bytes(builder.buffer())


def test_produce_to_the_offsets_topic_is_refused(broker: ThreadBroker) -> None:
    def produce(client: WireClient) -> int:
        response = client.request(
            0, 9, transactional_id=None, acks=1, timeout_ms=1000,
            topic_data=[dict(name=OFFSETS, partition_data=[dict(index=0, records=_batch())])],
        )  # fmt: skip
        return int(response.responses[0].partition_responses[0].error_code)

    with WireClient(broker.bootstrap) as client:
        # As Kafka: before its first use the topic does not exist, so the partition is unknown.
        assert produce(client) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        client.request(3, 12, topics=[dict(name=OFFSETS, topic_id=None)], allow_auto_topic_creation=False)
        assert produce(client) == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_offsets_topic_is_internal_in_all_topics_and_cannot_be_deleted(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        before = client.request(3, 12, topics=None, allow_auto_topic_creation=False)
        assert OFFSETS not in {t.name for t in before.topics}  # not created until first used
        wanted = [dict(name=OFFSETS, topic_id=None)]
        asked = client.request(3, 12, topics=wanted, allow_auto_topic_creation=False)
        assert asked.topics[0].error_code == ErrorCode.NONE and asked.topics[0].is_internal
        everything = client.request(3, 12, topics=None, allow_auto_topic_creation=False)
        (offsets,) = [t for t in everything.topics if t.name == OFFSETS]
        assert offsets.is_internal and len(offsets.partitions) == 50
        deleted = client.request(20, 5, topic_names=[OFFSETS], timeout_ms=1000)
        assert deleted.responses[0].error_code != ErrorCode.NONE
