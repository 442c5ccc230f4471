"""Per-record produce errors (KIP-467) and codecs over the wire: a batch refused for some records
names them in record_errors with the summary in error_message (Produce v8+), so librdkafka fails
only those records and delivers the rest; snappy, lz4 and zstd batches on a compacted topic; codec
ids no Kafka knows, and zstd before Produce v7, answered with Kafka's errors on a connection that
stays open."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkito.broker.log.batch import ATTRIBUTES_AT, CRC_AT, batch_crc
from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.waiting import DEADLINE_S
from tests.support.wire import WireClient

PRODUCE, FETCH = 0, 1
COMPACTED, PLAIN = "compacted", "plain"
KEYLESS = "Compacted topic cannot accept message without key in topic partition compacted-0"
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4


def batch(keys: list[bytes | None], codec: int = NONE) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i, key in enumerate(keys):
        builder.append(i, timestamp=None, key=key, value=b"value-%d" % i * 8, headers=[])
    return bytes(builder.build())


def with_codec_id(data: bytes, codec_id: int) -> bytes:
    """The batch with another codec id in its attributes and its CRC made right again."""
    buf = bytearray(data)
    (attributes,) = struct.unpack_from(">h", buf, ATTRIBUTES_AT)
    struct.pack_into(">h", buf, ATTRIBUTES_AT, (attributes & ~0x07) | codec_id)
    struct.pack_into(">I", buf, CRC_AT, batch_crc(buf, 0, len(buf)))
    return bytes(buf)


def produce(
    wire: WireClient, parts: list[tuple[str, int, bytes]], version: int = 9
) -> dict[tuple[str, int], Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, records in parts:
        topics.setdefault(name, []).append(dict(index=index, records=records))
    fields: dict[str, Any] = dict(
        acks=-1, timeout_ms=5000, topic_data=[dict(name=n, partition_data=p) for n, p in topics.items()]
    )
    if version >= 3:
        fields["transactional_id"] = None
    r = wire.request(PRODUCE, version, **fields)
    return {(t.name, p.index): p for t in r.responses for p in t.partition_responses}


def keys_in(wire: WireClient, topic: str, partition: int) -> list[bytes | None]:
    r = wire.request(
        FETCH, 11, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
        session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
        topics=[dict(topic=topic, partitions=[dict(
            partition=partition, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
            partition_max_bytes=1 << 20,
        )])],
    )  # fmt: skip
    records = r.responses[0].partitions[0].records or b""
    out: list[bytes | None] = []
    pos = 0
    while pos < len(records):
        size = int.from_bytes(records[pos + 8 : pos + 12], "big") + 12
        out += [rec.key for rec in DefaultRecordBatch(records[pos : pos + size])]
        pos += size
    return out


@pytest.fixture
def wire(broker: ThreadBroker) -> Any:
    create_topic(broker.bootstrap, COMPACTED, 2, cleanup_policy="compact")
    create_topic(broker.bootstrap, PLAIN, 1)
    with WireClient(broker.bootstrap) as client:
        yield client


@pytest.mark.parametrize("version", [7, 8, 9, 12])
def test_a_batch_with_keyless_records_names_them_from_v8(wire: WireClient, version: int) -> None:
    keys: list[bytes | None] = [b"k%d" % i if i % 3 else None for i in range(7)]
    answer = produce(wire, [(COMPACTED, 0, batch(keys)), (COMPACTED, 1, batch([b"a", b"b"]))], version)
    refused, accepted = answer[(COMPACTED, 0)], answer[(COMPACTED, 1)]
    assert (refused.error_code, refused.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert (accepted.error_code, accepted.base_offset) == (ErrorCode.NONE, 0)
    assert accepted.record_errors == [] and accepted.error_message is None
    if version < 8:  # the fields are not in the v7 response
        assert refused.record_errors == [] and refused.error_message is None
    else:
        assert [(e.batch_index, e.batch_index_error_message) for e in refused.record_errors] == [
            (0, KEYLESS),
            (3, KEYLESS),
            (6, KEYLESS),
        ]
        assert refused.error_message.startswith(
            "One or more records have been rejected due to 3 record errors in total, and only showing the "
            f"first three errors at most: [RecordError(batchIndex=0, message='{KEYLESS}'), "
        )
    assert keys_in(wire, COMPACTED, 0) == []


def test_other_refusals_carry_no_error_message(wire: WireClient) -> None:
    wire.request(10, 3, key="group", key_type=0)  # FindCoordinator creates __consumer_offsets
    corrupt = bytearray(batch([b"k"]))
    corrupt[-1] ^= 0xFF
    answer = produce(wire, [(PLAIN, 0, bytes(corrupt)), ("__consumer_offsets", 0, batch([b"k"]))])
    assert [(p.error_code, p.error_message, p.record_errors) for p in answer.values()] == [
        (ErrorCode.CORRUPT_MESSAGE, None, []),
        (ErrorCode.INVALID_TOPIC_EXCEPTION, None, []),
    ]


@pytest.mark.parametrize("codec", [SNAPPY, LZ4, ZSTD, GZIP])
def test_compressed_batches_on_a_compacted_topic_have_their_keys_checked(
    wire: WireClient, codec: int
) -> None:
    answer = produce(wire, [(COMPACTED, 0, batch([b"a", None, b"c"] * 20, codec))])
    refused = answer[(COMPACTED, 0)]
    assert refused.error_code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in refused.record_errors] == list(range(1, 60, 3))
    answer = produce(wire, [(COMPACTED, 0, batch([b"a", b"b", b"c"] * 20, codec))])
    assert (answer[(COMPACTED, 0)].error_code, answer[(COMPACTED, 0)].base_offset) == (ErrorCode.NONE, 0)
    assert keys_in(wire, COMPACTED, 0) == [b"a", b"b", b"c"] * 20


@pytest.mark.parametrize("codec_id", [5, 6, 7])
@pytest.mark.parametrize("topic", [COMPACTED, PLAIN])
def test_an_unknown_codec_id_is_unknown_server_error_and_the_connection_stays(
    wire: WireClient, codec_id: int, topic: str
) -> None:
    unknown = with_codec_id(batch([b"k1", b"k2"]), codec_id)
    answer = produce(wire, [(topic, 0, unknown), (COMPACTED, 1, batch([b"k"]))])
    assert answer[(topic, 0)].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert answer[(topic, 0)].error_message is None
    assert answer[(COMPACTED, 1)].error_code == ErrorCode.NONE
    # Before Produce v7 Kafka reads every partition's codec first: the whole request fails.
    answer = produce(wire, [(topic, 0, unknown), (COMPACTED, 1, batch([b"k"]))], version=5)
    assert {p.error_code for p in answer.values()} == {ErrorCode.UNKNOWN_SERVER_ERROR}
    assert keys_in(wire, topic, 0) == []
    assert keys_in(wire, COMPACTED, 1) == [b"k"]


def test_zstd_needs_produce_v7(wire: WireClient) -> None:
    zstd = batch([b"k1", b"k2"], ZSTD)
    answer = produce(wire, [(COMPACTED, 0, zstd), (COMPACTED, 1, batch([b"k"], LZ4))], version=6)
    assert answer[(COMPACTED, 0)].error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert answer[(COMPACTED, 1)].error_code == ErrorCode.NONE
    assert produce(wire, [(COMPACTED, 0, zstd)], version=7)[(COMPACTED, 0)].error_code == ErrorCode.NONE
    assert keys_in(wire, COMPACTED, 0) == [b"k1", b"k2"]


@pytest.mark.parametrize("one_batch", [True, False])
def test_librdkafka_fails_exactly_the_keyless_records(
    wire: WireClient, broker: ThreadBroker, one_batch: bool
) -> None:
    """librdkafka's own test (0011-produce_batch, record_fail): 100 records, every tenth keyless, to a
    compacted topic. In one batch the ten fail with INVALID_RECORD and librdkafka fails the other 90
    with _INVALID_DIFFERENT_RECORD (the batch was refused for them); one record a batch, the 90 are
    delivered. Without record_errors all 100 of the one batch fail with INVALID_RECORD."""
    from confluent_kafka import KafkaError, Producer

    conf: dict[str, Any] = {"bootstrap.servers": broker.bootstrap, "linger.ms": 2000}
    if not one_batch:
        conf["batch.size"] = 1
    producer = Producer(conf)
    results: dict[int, int | None] = {}

    def delivered(err: Any, msg: Any) -> None:
        results[int(msg.value())] = None if err is None else err.code()

    for i in range(100):
        key = None if i % 10 == 0 else b"key-%d" % i
        producer.produce(COMPACTED, key=key, value=b"%d" % i, partition=0, on_delivery=delivered)
    assert producer.flush(DEADLINE_S) == 0
    keyless = set(range(0, 100, 10))
    assert {i for i, code in results.items() if code == KafkaError.INVALID_RECORD} == keyless
    others = {results[i] for i in range(100) if i not in keyless}
    expected: int | None = KafkaError._INVALID_DIFFERENT_RECORD if one_batch else None
    assert others == {expected}
    stored = keys_in(wire, COMPACTED, 0)
    assert stored == ([] if one_batch else [b"key-%d" % i for i in range(100) if i not in keyless])
