"""Kafka's per-record checks on append (KIP-467): every refused record is named by its index in the
batch with Kafka's message, the batch's error says why in Kafka's words, and nothing is written;
batch-level checks (base offset, sequence, codec id) and every codec on a compacted topic."""

from __future__ import annotations

import struct
from importlib.metadata import requires
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkito.broker.log.batch import ATTRIBUTES_AT, CRC_AT, TIMESTAMP_TYPE_MASK, batch_crc
from kafkito.broker.log.cleaner import compact
from kafkito.broker.log.errors import (
    InvalidRecord,
    InvalidRecords,
    InvalidTimestamps,
    LogError,
    RecordError,
    UnreadableRecords,
)
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.protocol.errors import ErrorCode

from .helpers import LZ4, NONE, SNAPPY, ZSTD, Rec, batch, config, read_all

NOW = 1_800_000_000_000
HOUR = 3_600_000
DAY = 24 * HOUR
KEYLESS = "Compacted topic cannot accept message without key in topic partition t-3"


def plog_of(path: Path, **kw: object) -> PartitionLog:
    return PartitionLog(path, config(**kw), topic="t", partition=3, time_ms=lambda: NOW)


def compacted(path: Path, **kw: object) -> PartitionLog:
    return plog_of(path, cleanup_policy=frozenset({"compact"}), segment_bytes=700, **kw)


def patched(data: bytes, *, attributes_or: int = 0, base_offset: int | None = None) -> bytes:
    """A copy of a batch with attribute bits set or another base offset, its CRC made right again."""
    buf = bytearray(data)
    (attributes,) = struct.unpack_from(">h", buf, ATTRIBUTES_AT)
    struct.pack_into(">h", buf, ATTRIBUTES_AT, attributes | attributes_or)
    if base_offset is not None:
        struct.pack_into(">q", buf, 0, base_offset)
    struct.pack_into(">I", buf, CRC_AT, batch_crc(buf, 0, len(buf)))
    return bytes(buf)


def test_keyless_records_on_a_compacted_topic_are_each_named(tmp_path: Path) -> None:
    plog = compacted(tmp_path)
    recs = [Rec(None if i % 4 == 1 else b"k%d" % i, b"v", NOW) for i in range(12)]
    with pytest.raises(InvalidRecords) as e:
        plog.append(batch(recs))
    assert e.value.code == ErrorCode.INVALID_RECORD
    assert e.value.record_errors == (
        RecordError(1, KEYLESS),
        RecordError(5, KEYLESS),
        RecordError(9, KEYLESS),
    )
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{KEYLESS}')" for i in (1, 5, 9))
    assert e.value.message == (
        "One or more records have been rejected due to 3 record errors in total, and only showing the "
        f"first three errors at most: [{shown}]"
    )
    assert plog.log_end_offset == 0


def test_the_summary_quotes_only_the_first_three_record_errors(tmp_path: Path) -> None:
    plog = compacted(tmp_path)
    with pytest.raises(InvalidRecords) as e:
        plog.append(batch([Rec(None, b"v", NOW)] * 5))
    assert [r.batch_index for r in e.value.record_errors] == [0, 1, 2, 3, 4]
    assert "due to 5 record errors in total" in e.value.message
    assert e.value.message.count("RecordError(") == 3


def test_each_record_timestamp_is_judged_not_only_the_batch_header(tmp_path: Path) -> None:
    """The first record's timestamp is the batch's base timestamp; a later one may be older."""
    plog = plog_of(tmp_path, message_timestamp_before_max_ms=DAY, message_timestamp_after_max_ms=HOUR)
    too_old, too_new = NOW - 2 * DAY, NOW + 2 * HOUR
    recs = [
        Rec(b"a", b"v", NOW),
        Rec(b"b", b"v", too_old),
        Rec(b"c", b"v", NOW - HOUR),
        Rec(b"d", b"v", too_new),
    ]
    with pytest.raises(InvalidTimestamps) as e:
        plog.append(batch(recs))
    assert e.value.code == ErrorCode.INVALID_TIMESTAMP
    assert e.value.message == "One or more records have been rejected due to invalid timestamp"
    window = f"The timestamp should be within [{NOW - DAY}, {NOW + HOUR}]"
    assert e.value.record_errors == (
        RecordError(1, f"Timestamp {too_old} of message with offset 1 is out of range. {window}"),
        RecordError(3, f"Timestamp {too_new} of message with offset 3 is out of range. {window}"),
    )
    assert plog.log_end_offset == 0
    plog.append(batch(recs[:1] + recs[2:3]))
    assert plog.log_end_offset == 2


def test_a_timestamp_error_makes_the_whole_batch_invalid_timestamp_with_key_errors_listed(
    tmp_path: Path,
) -> None:
    plog = compacted(tmp_path)
    with pytest.raises(InvalidTimestamps) as e:
        plog.append(batch([Rec(None, b"v", NOW), Rec(b"k", b"v", NOW + 2 * HOUR)]))
    assert [r.batch_index for r in e.value.record_errors] == [0, 1]
    assert e.value.record_errors[0].message == KEYLESS


def test_a_producer_may_not_set_log_append_time(tmp_path: Path) -> None:
    plog = plog_of(tmp_path, message_timestamp_type="LogAppendTime")
    data = patched(batch([Rec(b"k", b"val", NOW)]), attributes_or=TIMESTAMP_TYPE_MASK)
    with pytest.raises(InvalidTimestamps) as e:
        plog.append(data)
    [(index, message)] = e.value.record_errors
    assert index == 0
    assert message == (
        f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, "
        "value=3 bytes). Producer should not set timestamp type to LogAppendTime."
    )


def test_a_client_batch_must_start_at_offset_zero_and_an_idempotent_one_have_a_sequence(
    tmp_path: Path,
) -> None:
    plog = plog_of(tmp_path)
    with pytest.raises(InvalidRecord):
        plog.append(patched(batch(2), base_offset=7))
    with pytest.raises(InvalidRecord):
        plog.append(batch(2, producer_id=1000, epoch=0, sequence=-1))
    assert plog.log_end_offset == 0
    plog.append(batch(2, producer_id=1000, epoch=0, sequence=0))
    assert plog.log_end_offset == 2


@pytest.mark.parametrize("codec_id", [5, 6, 7])
@pytest.mark.parametrize("compacted_topic", [False, True])
def test_an_unknown_codec_id_is_unknown_server_error(
    tmp_path: Path, codec_id: int, compacted_topic: bool
) -> None:
    plog = compacted(tmp_path) if compacted_topic else plog_of(tmp_path)
    with pytest.raises(UnreadableRecords) as e:
        plog.append(patched(batch(2), attributes_or=codec_id))
    assert e.value.code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert plog.log_end_offset == 0


def test_a_payload_that_does_not_decompress_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """A snappy-flagged batch whose payload is not snappy, CRC right: only decoded where keys count."""
    plog = compacted(tmp_path)
    with pytest.raises(LogError) as e:
        plog.append(patched(batch(3), attributes_or=SNAPPY))
    assert e.value.code in (ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.INVALID_RECORD)
    assert plog.log_end_offset == 0


@pytest.mark.parametrize("codec", [SNAPPY, LZ4, ZSTD])
def test_every_codec_is_checked_and_compacted_on_a_compacted_topic(tmp_path: Path, codec: int) -> None:
    plog = compacted(tmp_path)
    with pytest.raises(InvalidRecords) as e:
        plog.append(batch([Rec(b"k", b"v", NOW), Rec(None, b"v", NOW)], compression=codec))
    assert [r.batch_index for r in e.value.record_errors] == [1]
    for round_ in range(12):
        plog.append(
            batch(
                [Rec(b"a", b"a%d" % round_ * 20, NOW), Rec(b"b%d" % round_, b"x" * 40, NOW)],
                compression=codec,
            )
        )
    before = read_all(plog)
    active_base = plog.segments[-1].base_offset
    assert compact(plog, NOW, force=True) is not None
    after = read_all(plog)
    closed = [(o, r) for o, r in before if o < active_base]
    latest = {r.key: o for o, r in closed}
    assert [(o, r) for o, r in after if o < active_base] == [(o, r) for o, r in closed if latest[r.key] == o]
    assert {h.compression for h in plog.batch_headers()} == {codec}


def test_kafkito_installs_the_codecs_it_decompresses_with() -> None:
    """`pip install kafkito` brings python-snappy, lz4 and zstandard through kafka-python's extras."""
    kafka_python = [
        r for r in requires("kafkito") or [] if r.startswith("kafka-python") and "extra ==" not in r
    ]
    assert kafka_python and all(x in kafka_python[0] for x in ("lz4", "snappy", "zstd"))
    import kafka.codec as codecs

    assert codecs.has_snappy() and codecs.has_lz4() and codecs.has_zstd()


def test_plain_batches_need_no_decoding_with_the_default_timestamp_bounds(tmp_path: Path) -> None:
    """A batch with records older than its base timestamp is fine with Kafka's default bounds."""
    plog = plog_of(tmp_path)
    builder = DefaultRecordBatchBuilder(2, NONE, False, -1, -1, -1, 1 << 30)
    builder.append(0, timestamp=NOW, key=None, value=b"v", headers=[])
    builder.append(1, timestamp=1, key=None, value=b"v", headers=[])
    plog.append(bytes(builder.build()))
    assert plog.log_end_offset == 2
