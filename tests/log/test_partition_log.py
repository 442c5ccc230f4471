"""PartitionLog: append, offset assignment, reads, lookups, restart."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafkito.broker.log.errors import (
    CorruptMessage,
    InvalidRecord,
    InvalidTimestamp,
    MessageTooLarge,
    OffsetOutOfRange,
    RecordListTooLarge,
    UnknownTopicOrPartition,
)
from kafkito.broker.log.partition_log import PartitionLog, TimestampOffset

from .helpers import CODECS, GZIP, LZ4, Rec, batch, config, decode, read_all, records


def open_log(path: Path, **kw: object) -> PartitionLog:
    return PartitionLog(path, config(**kw), topic="t", partition=0, time_ms=lambda: 1_800_000_000_000)


@pytest.mark.parametrize("codec", CODECS)
def test_batches_are_stored_byte_identical_for_every_codec(tmp_path: Path, codec: int) -> None:
    plog = open_log(tmp_path)
    sent = [batch(records(20, start=i * 20), compression=codec) for i in range(3)]
    for raw in sent:
        plog.append(raw)
    stored = plog.read(0, 1 << 20)
    pos = 0
    for i, raw in enumerate(sent):
        got = stored[pos : pos + len(raw)]
        assert struct.unpack_from(">q", got)[0] == i * 20  # the only rewritten fields: base offset...
        assert struct.unpack_from(">i", got, 12)[0] == 0  # ...and the partition leader epoch
        assert got[8:12] == raw[8:12] and got[16:] == raw[16:]
        pos += len(raw)
    assert pos == len(stored)
    assert [r for _, r in decode(stored)] == records(60)
    assert [o for o, _ in decode(stored)] == list(range(60))


def test_offsets_are_assigned_consecutively_across_a_buffer_of_many_batches(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    first = plog.append(batch(3))
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 2, 3)
    multi = batch(records(2)) + batch(records(5), compression=GZIP) + batch(records(1))
    info = plog.append(multi)
    assert (info.base_offset, info.last_offset, info.record_count) == (3, 10, 8)
    assert info.log_append_time == -1 and info.log_start_offset == 0
    assert plog.log_end_offset == plog.high_watermark == 11
    assert [h.base_offset for h in plog.batch_headers()] == [0, 3, 5, 10]
    assert [o for o, _ in read_all(plog)] == list(range(11))


def test_corrupt_and_invalid_batches_are_rejected_and_nothing_is_written(tmp_path: Path) -> None:
    plog = open_log(tmp_path, max_message_bytes=2000)
    good = batch(5)
    flipped = bytearray(good)
    flipped[-1] ^= 0xFF
    with pytest.raises(CorruptMessage) as e:
        plog.append(good + bytes(flipped))
    assert e.value.code == 2
    with pytest.raises(CorruptMessage):
        plog.append(good[:-3])
    with pytest.raises(CorruptMessage):
        plog.append(good + b"\x00" * 20)
    bad_length = bytearray(good)
    struct.pack_into(">i", bad_length, 8, len(good) + 100)
    with pytest.raises(CorruptMessage):
        plog.append(bytes(bad_length))
    old_magic = bytearray(good)
    old_magic[16] = 1
    with pytest.raises(InvalidRecord) as e2:
        plog.append(bytes(old_magic))
    assert e2.value.code == 87
    with pytest.raises(MessageTooLarge) as e3:
        plog.append(batch(records(1, size=3000)))
    assert e3.value.code == 10
    assert plog.log_end_offset == 0 and plog.size_bytes == 0
    assert plog.append(b"").base_offset == -1


def test_records_larger_than_a_segment_are_rejected(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=500)
    with pytest.raises(RecordListTooLarge):
        plog.append(batch(records(3, size=300)))


def test_read_returns_whole_batches_within_max_bytes_but_always_at_least_one(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    sizes = []
    for i in range(10):
        raw = batch(records(4, start=i * 4, size=50))
        sizes.append(len(raw))
        plog.append(raw)
    one = plog.read(0, 1)
    assert len(one) == sizes[0]
    assert len(plog.read(0, sizes[0] + sizes[1] - 1)) == sizes[0]
    assert len(plog.read(0, sizes[0] + sizes[1])) == sizes[0] + sizes[1]
    # An offset inside a batch returns that whole batch first.
    mid = plog.read(6, 1 << 20)
    assert decode(mid)[0][0] == 4 and len(mid) == sum(sizes[1:])
    assert plog.read(40, 100) == b""
    with pytest.raises(OffsetOutOfRange) as e:
        plog.read(41, 100)
    assert e.value.code == 1
    with pytest.raises(OffsetOutOfRange):
        plog.read(-1, 100)


def test_read_stops_at_max_offset(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for i in range(5):
        plog.append(batch(records(2, start=i * 2)))
    assert [o for o, _ in decode(plog.read(0, 1 << 20, max_offset=6))] == list(range(6))
    assert [o for o, _ in decode(plog.read(0, 1 << 20, max_offset=5))] == list(range(6))
    assert plog.read(6, 1 << 20, max_offset=6) == b""


def test_lookups_across_many_segments_and_index_entries(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=2000, index_interval_bytes=300)
    expected = []
    offset = 0
    for i in range(120):
        n = 1 + i % 4
        recs = records(n, start=offset, size=5 + (i * 7) % 40)
        plog.append(batch(recs, compression=LZ4 if i % 3 == 0 else 0))
        expected.extend(recs)
        offset += n
    assert len(plog.segments) >= 8
    assert all(s.index_entries > 1 for s in plog.segments[:-1])
    for target in range(plog.log_end_offset):
        got = decode(plog.read(target, 1))
        offsets = [o for o, _ in got]
        assert target in offsets
        assert got[offsets.index(target)][1] == expected[target]
    assert [r for _, r in read_all(plog)] == expected


def test_data_and_offsets_survive_reopen(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=1500)
    for i in range(30):
        plog.append(batch(records(3, start=i * 3)))
    before = read_all(plog)
    segments = len(plog.segments)
    plog.close()
    again = open_log(tmp_path, segment_bytes=1500)
    assert again.log_end_offset == 90 and len(again.segments) == segments
    assert read_all(again) == before
    info = again.append(batch(2))
    assert info.base_offset == 90
    again.close()


def test_reopen_without_close_keeps_every_appended_batch(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for i in range(10):
        plog.append(batch(records(2, start=i * 2)))
    # No close(): as after a SIGKILL, the bytes are in the file but no clean-shutdown marker.
    again = open_log(tmp_path)
    assert again.log_end_offset == 20
    assert [r for _, r in read_all(again)] == records(20)


def test_segment_files_use_kafka_names(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=600)
    for i in range(6):
        plog.append(batch(records(2, start=i * 2, size=100)))
    names = sorted(p.name for p in tmp_path.glob("*.log"))
    assert names[0] == "00000000000000000000.log"
    assert names == [f"{s.base_offset:020d}.log" for s in plog.segments]


def test_log_append_time_topics_stamp_the_batch_and_keep_a_valid_crc(tmp_path: Path) -> None:
    plog = PartitionLog(
        tmp_path, config(message_timestamp_type="LogAppendTime"), time_ms=lambda: 1_900_000_000_000
    )
    info = plog.append(batch(records(3), compression=GZIP))
    assert info.log_append_time == 1_900_000_000_000
    got = decode(plog.read(0, 1 << 20))
    assert [r.timestamp for _, r in got] == [1_900_000_000_000] * 3
    assert [r.value for _, r in got] == [r.value for r in records(3)]
    assert plog.batch_headers()[0].is_log_append_time


def test_list_offsets_by_timestamp_and_max_timestamp(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=800, index_interval_bytes=100)
    ts = 1_000
    for i in range(20):
        recs = [Rec(b"k", b"v", ts + i * 10 + j) for j in range(3)]
        plog.append(batch(recs, compression=GZIP if i % 2 else 0))
    assert len(plog.segments) > 2
    assert plog.offset_for_timestamp(0) == TimestampOffset(1000, 0)
    assert plog.offset_for_timestamp(1001) == TimestampOffset(1001, 1)
    assert plog.offset_for_timestamp(1003) == TimestampOffset(1010, 3)
    assert plog.offset_for_timestamp(1152) == TimestampOffset(1152, 47)
    assert plog.offset_for_timestamp(1193) is None
    assert plog.max_timestamp_offset() == TimestampOffset(1192, 59)
    plog.delete_records(31)
    assert plog.offset_for_timestamp(0) == TimestampOffset(1101, 31)


def test_max_timestamp_is_the_earliest_record_holding_it(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(batch([Rec(b"a", b"1", 50), Rec(b"b", b"2", 90), Rec(b"c", b"3", 10)]))
    plog.append(batch([Rec(b"d", b"4", 90)]))
    assert plog.max_timestamp_offset() == TimestampOffset(90, 1)
    assert open_log(tmp_path / "empty").max_timestamp_offset() is None


def test_truncate_to_drops_whole_batches_at_and_after_the_offset(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=700)
    for i in range(10):
        plog.append(batch(records(3, start=i * 3)))
    plog.truncate_to(14)
    assert plog.log_end_offset == 12
    assert [r for _, r in read_all(plog)] == records(12)
    assert plog.append(batch(records(1))).base_offset == 12
    plog.truncate_to(0)
    assert plog.log_end_offset == 0 and read_all(plog) == []
    plog.close()
    assert open_log(tmp_path, segment_bytes=700).log_end_offset == 0


def test_create_time_topics_reject_timestamps_too_far_from_broker_time(tmp_path: Path) -> None:
    now = 1_800_000_000_000
    plog = PartitionLog(tmp_path, config(message_timestamp_before_max_ms=60_000), time_ms=lambda: now)
    hour = 3_600_000
    assert plog.append(batch(records(1, ts=now + hour))).base_offset == 0
    with pytest.raises(InvalidTimestamp) as e:
        plog.append(batch(records(1, ts=now + hour + 1)))
    assert e.value.code == 32
    with pytest.raises(InvalidTimestamp):
        plog.append(batch(records(1, ts=now - 60_001)))
    lat = config(message_timestamp_type="LogAppendTime")
    appended = PartitionLog(tmp_path / "lat", lat, time_ms=lambda: now)
    assert appended.append(batch(records(1, ts=now + 100 * hour))).base_offset == 0


def test_a_closed_log_refuses_appends_and_reads(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(batch(1))
    plog.close()
    with pytest.raises(UnknownTopicOrPartition):
        plog.append(batch(1))
    with pytest.raises(UnknownTopicOrPartition):
        plog.read(0, 100)
