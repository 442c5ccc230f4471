"""The batch header codec: parse, validate, patch in place."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kafkito.broker.log.batch import (
    HEADER_SIZE,
    iter_headers,
    parse_header,
    set_base_offset,
    set_log_append_time,
    split_batches,
)
from kafkito.broker.log.errors import CorruptMessage

from .helpers import LZ4, batch, records


def test_header_fields_match_what_kafka_python_reads() -> None:
    raw = batch(records(7), compression=LZ4, producer_id=12, epoch=3, sequence=40)
    h = parse_header(raw)
    ref = DefaultRecordBatch(raw)
    assert HEADER_SIZE == 61
    assert (h.size, h.magic, h.crc, h.compression) == (ref.size_in_bytes, 2, ref.crc, LZ4)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.last_sequence) == (12, 3, 40, 46)
    assert (h.last_offset_delta, h.record_count, h.max_timestamp) == (6, 7, ref.max_timestamp)


def test_last_sequence_wraps_past_int32_max() -> None:
    h = parse_header(batch(records(3), producer_id=1, epoch=0, sequence=2**31 - 2))
    assert h.last_sequence == 0


def test_patching_offsets_keeps_the_crc_and_log_append_time_recomputes_it() -> None:
    buf = bytearray(batch(records(3)))
    set_base_offset(buf, 0, 1234)
    assert DefaultRecordBatch(buf).validate_crc()
    set_log_append_time(buf, 0, len(buf), 42)
    ref = DefaultRecordBatch(buf)
    assert ref.validate_crc() and ref.timestamp_type == 1
    assert [r.timestamp for r in ref] == [42, 42, 42]
    assert [r.offset for r in DefaultRecordBatch(buf)] == [1234, 1235, 1236]


def test_split_batches_walks_a_buffer_and_iter_headers_ignores_a_cut_tail() -> None:
    a, b = batch(records(2)), batch(records(3))
    assert [(pos, h.record_count) for pos, h in split_batches(a + b)] == [(0, 2), (len(a), 3)]
    assert split_batches(b"") == []
    assert [pos for pos, _ in iter_headers(a + b[:-1])] == [0]
    with pytest.raises(CorruptMessage):
        split_batches(a + b[:-1])
