"""Message formats v0/v1 on the wire, against the broker: Kafka's checks on append, its down-conversion
rules on fetch, and the old semantics of ListOffsets v0, OffsetCommit v0-1 and OffsetFetch v0."""

from __future__ import annotations

import struct
import time
import zlib
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

from kafkito.broker.log.legacy_format import down_convert, to_v2
from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient


def message_set(magic: int, codec: int = 0, count: int = 3, timestamp: int = 1_700_000_000_000) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    for i in range(count):
        builder.append(i, timestamp + i, f"k{i}".encode(), f"v{i}".encode())
    return bytes(builder.build())


def produce(client: WireClient, version: int, topic: str, records: bytes, acks: int = 1) -> Any:
    partition = dict(index=0, records=records)
    response = client.request(
        0, version, acks=acks, timeout_ms=5000, topic_data=[dict(name=topic, partition_data=[partition])]
    )
    return response.responses[0].partition_responses[0]


def fetch(client: WireClient, version: int, topic: str, offset: int = 0, max_bytes: int = 1 << 20) -> Any:
    part = dict(partition=0, fetch_offset=offset, partition_max_bytes=max_bytes)
    response = client.request(1, version, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                              topics=[dict(topic=topic, partitions=[part])])  # fmt: skip
    return response.responses[0].partitions[0]


def legacy_messages(records: bytes, magic: int) -> list[tuple[int, int | None, bytes | None, bytes | None]]:
    """(offset, timestamp, key, value) of every message of a message set (wrappers expanded)."""
    out = []
    pos = 0
    while pos + 12 <= len(records):
        (size,) = struct.unpack_from(">i", records, pos + 8)
        if pos + 12 + size > len(records):
            break
        batch = LegacyRecordBatch(records[pos : pos + 12 + size], magic)
        assert batch.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value) for r in batch]
        pos += 12 + size
    return out


def test_produce_v0_to_v2_store_v2_batches_and_answer_each_versions_fields(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "conv")
    with WireClient(broker.bootstrap) as client:
        assert produce(client, 0, "conv", message_set(0)).base_offset == 0
        answer = produce(client, 2, "conv", message_set(1, codec=1))
        assert (answer.error_code, answer.base_offset, answer.log_append_time_ms) == (0, 3, -1)
        v0 = fetch(client, 0, "conv")  # magic 0: no timestamps
        assert [(o, k, v) for o, _, k, v in legacy_messages(v0.records, 0)] == [
            (i, f"k{i % 3}".encode(), f"v{i % 3}".encode()) for i in range(6)
        ]
        v2 = legacy_messages(fetch(client, 2, "conv").records, 1)
        assert [ts for _, ts, _, _ in v2] == [-1, -1, -1] + [1_700_000_000_000 + i for i in range(3)]
        modern = fetch(client, 4, "conv").records
        assert modern[16] == 2  # stored as v2 batches


def test_produce_checks_as_kafka_does(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "checks")
    good = message_set(1)
    corrupt = bytearray(good)
    corrupt[-1] ^= 0xFF
    append_time = bytearray(message_set(1, count=1))
    append_time[17] |= 0x08  # a producer claiming LogAppendTime
    struct.pack_into(">I", append_time, 12, zlib.crc32(append_time[16:]))
    with WireClient(broker.bootstrap) as client:
        assert produce(client, 1, "checks", bytes(corrupt)).error_code == ErrorCode.CORRUPT_MESSAGE
        assert produce(client, 1, "checks", bytes(append_time)).error_code == ErrorCode.INVALID_TIMESTAMP
        partial = good + good[:20]  # a partial message at the end is trimmed, as Kafka trims it
        answer = produce(client, 1, "checks", partial)
        assert (answer.error_code, answer.base_offset) == (0, 0)
        assert len(legacy_messages(fetch(client, 3, "checks").records, 1)) == 3
        assert produce(client, 0, "nope", good).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert client.request(18, 0).error_code == 0


def test_nested_compression_is_an_invalid_record() -> None:
    import kafka.codec as codecs

    from kafkito.broker.log.errors import InvalidRecord
    from kafkito.broker.log.legacy_format import _legacy_message

    inner = message_set(1, codec=1)  # a gzip wrapper whose inner message is itself compressed
    wrapper = _legacy_message(0, 1, 1, 0, None, codecs.gzip_encode(inner), None)
    try:
        to_v2(wrapper)
    except InvalidRecord:
        return
    raise AssertionError("nested compression was accepted")


def test_log_append_time_topics_stamp_converted_records(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "lat", message_timestamp_type="LogAppendTime")
    before = int(time.time() * 1000)
    with WireClient(broker.bootstrap) as client:
        answer = produce(client, 2, "lat", message_set(1, codec=2, timestamp=5))
        assert answer.log_append_time_ms >= before
        records = fetch(client, 3, "lat").records
        assert [ts for _, ts, _, _ in legacy_messages(records, 1)] == [answer.log_append_time_ms] * 3
        assert records[17] & 0x08  # the wrapper says LogAppendTime


def test_down_conversion_rules() -> None:
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    for i in range(4):
        builder.append(i, 1000 + i, b"k", b"v%d" % i, [("h", b"x")])
    plain = bytes(builder.build())
    # uncompressed: records before the fetch offset are left out; headers dropped
    assert [o for o, *_ in legacy_messages(down_convert(plain, 1, 2), 1)] == [2, 3]
    zstd = DefaultRecordBatchBuilder(2, 4, 0, -1, -1, -1, 1 << 20)
    zstd.append(0, 1, None, b"x" * 1000, [])
    from kafkito.broker.log.legacy_format import UnsupportedCompressionType

    try:
        down_convert(bytes(zstd.build()), 1, 0)
    except UnsupportedCompressionType:
        pass
    else:
        raise AssertionError("zstd was down-converted")
    gz = DefaultRecordBatchBuilder(2, 1, 0, -1, -1, -1, 1 << 20)
    for i in range(4):
        gz.append(i, 1000 + i, None, b"y" * 100, [])
    converted = down_convert(bytes(gz.build()), 1, 2)  # a compressed batch is converted whole
    assert [o for o, *_ in legacy_messages(converted, 1)] == [0, 1, 2, 3]
    assert struct.unpack_from(">q", converted, 0)[0] == 3  # the wrapper carries the last offset


def test_fetch_zstd_below_v4_is_unsupported_compression_type(broker: ThreadBroker) -> None:
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, "z")
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "zstd"})
    producer.produce("z", value=b"z" * 1000)
    assert producer.flush(10) == 0
    with WireClient(broker.bootstrap) as client:
        assert fetch(client, 3, "z").error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        assert fetch(client, 4, "z").error_code == ErrorCode.NONE


def test_fetch_v0_to_v2_never_return_a_batch_above_the_partition_limit(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "limit")
    with WireClient(broker.bootstrap) as client:
        produce(client, 2, "limit", message_set(1, count=1))
        for version in (0, 1, 2):
            assert fetch(client, version, "limit", max_bytes=10).records == b""
        assert legacy_messages(fetch(client, 3, "limit", max_bytes=10).records, 1)  # v3: the first whole


def test_list_offsets_v0_answers_segment_offsets(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "lo")
    with WireClient(broker.bootstrap) as client:

        def ask(timestamp: int, count: int) -> Any:
            part = dict(partition_index=0, timestamp=timestamp, max_num_offsets=count)
            response = client.request(2, 0, replica_id=-1, topics=[dict(name="lo", partitions=[part])])
            return response.topics[0].partitions[0]

        empty = ask(-1, 5)
        assert (empty.error_code, empty.old_style_offsets) == (0, [0])
        produce(client, 2, "lo", message_set(1, count=4))
        assert ask(-1, 1).old_style_offsets == [4]
        assert ask(-1, 10).old_style_offsets == [4, 0]  # the log end, then the segment's base
        assert ask(-2, 10).old_style_offsets == [0]
        assert ask(0, 10).old_style_offsets == []  # nothing was written before 1970
        assert ask(-3, 1).error_code == ErrorCode.UNSUPPORTED_VERSION


def test_offset_commit_v0_and_offset_fetch_v0_are_unsupported_as_in_kraft_kafka_v1_keeps_its_timestamp(
    broker: ThreadBroker,
) -> None:
    create_topic(broker.bootstrap, "oc")
    with WireClient(broker.bootstrap) as client:
        part = dict(partition_index=0, committed_offset=3, committed_metadata="m")
        v0 = client.request(8, 0, group_id="g", topics=[dict(name="oc", partitions=[part])])
        assert v0.topics[0].partitions[0].error_code == ErrorCode.UNSUPPORTED_VERSION
        missing = client.request(8, 0, group_id="g", topics=[dict(name="none", partitions=[part])])
        assert missing.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        an_hour_ago = int(time.time() * 1000) - 3_600_000
        stamped = dict(part, commit_timestamp=an_hour_ago)
        v1 = client.request(8, 1, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                            topics=[dict(name="oc", partitions=[stamped])])  # fmt: skip
        assert v1.topics[0].partitions[0].error_code == ErrorCode.NONE
        fetched = client.request(9, 1, group_id="g", topics=[dict(name="oc", partition_indexes=[0])])
        got = fetched.topics[0].partitions[0]
        assert (got.committed_offset, got.metadata, got.error_code) == (3, "m", 0)
        v0_fetch = client.request(9, 0, group_id="g", topics=[dict(name="oc", partition_indexes=[0])])
        got = v0_fetch.topics[0].partitions[0]
        assert (got.committed_offset, got.error_code) == (-1, ErrorCode.UNSUPPORTED_VERSION)
    from kafkito.broker.offsets.dump import records

    commits = [r for r in records(broker.config.data_dir, "g") if r.get("value", {}).get("offset") == 3]
    # v1: the client's commit time, stored as given
    assert [r["value"]["commit_timestamp"] for r in commits] == [an_hour_ago]


def test_message_format_v0_records_have_no_timestamp_to_judge(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "strict", message_timestamp_before_max_ms="60000")
    with WireClient(broker.bootstrap) as client:
        assert produce(client, 0, "strict", message_set(0)).error_code == ErrorCode.NONE  # no timestamp
        old = produce(client, 2, "strict", message_set(1, timestamp=1_000))
        assert old.error_code == ErrorCode.INVALID_TIMESTAMP  # magic 1: a real timestamp, 1970


def test_a_topic_without_down_conversion_refuses_old_fetches(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "nodown", message_downconversion_enable="false")
    with WireClient(broker.bootstrap) as client:
        produce(client, 2, "nodown", message_set(1))
        assert fetch(client, 3, "nodown").error_code == ErrorCode.UNSUPPORTED_VERSION
        assert fetch(client, 4, "nodown").error_code == ErrorCode.NONE


def test_down_conversion_drops_control_batches_and_keeps_transactional_records() -> None:
    from kafkito.broker.log.control import marker_batch

    txn = DefaultRecordBatchBuilder(2, 0, 1, 7, 0, 0, 1 << 20)  # transactional, producer id 7
    txn.append(0, 1000, b"k", b"in a transaction", [])
    records = bytes(txn.build())
    marker = bytearray(marker_batch(7, 0, False, 0, 2000))  # an ABORT marker after it
    struct.pack_into(">q", marker, 0, 1)  # at offset 1
    converted = legacy_messages(down_convert(records + bytes(marker), 1, 0), 1)
    assert converted == [(0, 1000, b"k", b"in a transaction")]  # read uncommitted, no marker
