"""Retention by time and size, DeleteRecords and the log start offset."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkito.broker.log.errors import OffsetOutOfRange
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import Rec, batch, config, read_all, records

DAY = 86_400_000


def timed_log(path: Path, **kw: object) -> PartitionLog:
    """Ten 2-record batches, one per day of record time, ~3 batches per segment."""
    plog = PartitionLog(path, config(segment_bytes=400, **kw), time_ms=lambda: 10 * DAY)
    for day in range(10):
        plog.append(batch([Rec(b"k", b"v" * 20, day * DAY), Rec(b"k", b"v" * 20, day * DAY + 1)]))
    return plog


def test_retention_ms_deletes_segments_whose_newest_record_is_too_old(tmp_path: Path) -> None:
    plog = timed_log(tmp_path, retention_ms=3 * DAY)
    segments = plog.segments
    assert len(segments) >= 4
    now = 10 * DAY
    deleted = plog.maybe_enforce_retention(now)
    assert deleted >= 1
    for s in plog.segments[:-1]:
        assert now - s.max_timestamp <= 3 * DAY
    assert plog.log_start_offset == plog.segments[0].base_offset > 0
    with pytest.raises(OffsetOutOfRange):
        plog.read(0, 100)
    assert [o for o, _ in read_all(plog)] == list(range(plog.log_start_offset, 20))
    assert plog.maybe_enforce_retention(now) == 0


def test_when_everything_expired_the_active_segment_goes_too(tmp_path: Path) -> None:
    plog = timed_log(tmp_path, retention_ms=DAY)
    plog.maybe_enforce_retention(100 * DAY)
    assert plog.log_start_offset == plog.log_end_offset == 20
    assert len(plog.segments) == 1 and plog.segments[0].base_offset == 20
    assert plog.read(20, 100) == b""
    assert plog.append(batch([Rec(b"k", b"v", DAY)])).base_offset == 20
    plog.close()
    again = PartitionLog(tmp_path, config(segment_bytes=400))
    assert (again.log_start_offset, again.log_end_offset) == (20, 21)


def test_retention_bytes_keeps_the_newest_segments_within_the_limit(tmp_path: Path) -> None:
    plog = timed_log(tmp_path, retention_ms=-1, retention_bytes=700)
    total = plog.size_bytes
    assert plog.maybe_enforce_retention(0) == 1
    # Kafka's rule: a segment goes only if the log stays at or above retention.bytes without it.
    assert total > plog.size_bytes >= 700 > plog.size_bytes - plog.segments[0].size
    assert plog.log_end_offset == 20


def test_compact_only_topics_are_not_deleted_by_retention(tmp_path: Path) -> None:
    plog = timed_log(tmp_path, retention_ms=1, cleanup_policy=frozenset({"compact"}))
    assert plog.maybe_enforce_retention(100 * DAY) == 0
    assert plog.log_start_offset == 0


def test_delete_records_moves_the_log_start_and_survives_restart(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(segment_bytes=400))
    for i in range(10):
        plog.append(batch(records(2, start=i * 2, size=20)))
    first_segments = len(plog.segments)
    assert plog.delete_records(7) == 7
    assert plog.log_start_offset == 7
    assert len(plog.segments) < first_segments
    with pytest.raises(OffsetOutOfRange):
        plog.read(6, 100)
    assert [o for o, _ in read_all(plog)] == list(range(7, 20))
    assert plog.delete_records(3) == 7  # never moves back
    with pytest.raises(OffsetOutOfRange):
        plog.delete_records(21)
    plog.close()
    again = PartitionLog(tmp_path, config(segment_bytes=400))
    assert again.log_start_offset == 7
    assert again.delete_records(-1) == 20
    assert again.read(20, 100) == b""
