"""Compaction: the last record per key survives in closed segments, offsets and batch ranges are kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.broker.log.cleaner import compact, install, plan_compaction
from kafkito.broker.log.errors import InvalidRecord
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import GZIP, ZSTD, Rec, batch, config, read_all

NOW = 1_800_000_000_000
DAY = 86_400_000


def compacted_log(path: Path, **kw: object) -> PartitionLog:
    cfg = config(cleanup_policy=frozenset({"compact"}), segment_bytes=600, **kw)
    return PartitionLog(path, cfg, time_ms=lambda: NOW)


def put(
    plog: PartitionLog, *pairs: tuple[bytes, bytes | None], ts: int = NOW - 2 * DAY, codec: int = 0
) -> None:
    plog.append(batch([Rec(k, v, ts) for k, v in pairs], compression=codec))


def test_compaction_keeps_the_latest_value_per_key_with_original_offsets(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for round_ in range(12):
        put(plog, (b"a", b"a%d" % round_), (b"b", b"b%d" % round_), codec=GZIP if round_ % 2 else ZSTD)
        put(plog, (b"c%d" % round_, b"once"))
    before = read_all(plog)
    active_base = plog.segments[-1].base_offset
    assert len(plog.segments) > 3
    plan = compact(plog, NOW, force=True)
    assert plan is not None and plan.records_after < plan.records_before
    after = read_all(plog)
    closed = [(o, r) for o, r in before if o < active_base]
    latest = {r.key: o for o, r in closed}
    assert [(o, r) for o, r in after if o < active_base] == [(o, r) for o, r in closed if latest[r.key] == o]
    assert [(o, r) for o, r in after if o >= active_base] == [(o, r) for o, r in before if o >= active_base]
    assert plog.log_end_offset == 36
    # Rebuilt batches keep their offset range and codec; every batch still passes its CRC (read_all).
    for h in plog.batch_headers():
        assert h.record_count <= h.last_offset_delta + 1
        assert h.compression in (0, GZIP, 4)
    plog.close()
    assert read_all(compacted_log(tmp_path)) == after


def test_tombstones_stay_until_delete_retention_then_go(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path, delete_retention_ms=DAY)
    put(plog, (b"k", b"v1"), ts=NOW - 3 * DAY)
    put(plog, (b"k", None), ts=NOW - 3 * DAY)
    for i in range(10):
        put(plog, (b"other%d" % i, b"x" * 50), ts=NOW)
    compact(plog, NOW - 2 * DAY, force=True)  # the tombstone is exactly delete.retention.ms old
    recs = [r for _, r in read_all(plog)]
    assert [r.value for r in recs if r.key == b"k"] == [None]
    compact(plog, NOW, force=True)
    assert [r for _, r in read_all(plog) if r.key == b"k"] == []


def test_compacted_topics_refuse_records_without_keys(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    with pytest.raises(InvalidRecord) as e:
        plog.append(batch([Rec(b"k", b"v", NOW), Rec(None, b"v", NOW)], compression=GZIP))
    assert e.value.code == 87
    assert plog.log_end_offset == 0


def test_a_clean_log_is_not_compacted_again_until_it_is_dirty(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for i in range(20):
        put(plog, (b"k%d" % (i % 3), b"v" * 40))
    assert compact(plog, NOW) is not None
    assert plan_compaction(plog, NOW) is None
    assert plog.cleaner_offset == plog.segments[-1].base_offset
    for i in range(40):
        put(plog, (b"k%d" % (i % 3), b"w" * 40))
    assert compact(plog, NOW) is not None
    active_base = plog.segments[-1].base_offset
    closed_keys = [r.key for o, r in read_all(plog) if o < active_base]
    assert sorted(closed_keys) == [b"k0", b"k1", b"k2"]


def test_min_compaction_lag_protects_recent_segments(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path, min_compaction_lag_ms=DAY)
    for i in range(20):
        put(plog, (b"k", b"v%d" % i), ts=NOW)
    assert plan_compaction(plog, NOW, force=True) is None
    assert compact(plog, NOW + 2 * DAY, force=True) is not None


def test_delete_policy_logs_are_not_compacted(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(segment_bytes=600), time_ms=lambda: NOW)
    for i in range(20):
        put(plog, (b"k", b"v%d" % i))
    assert compact(plog, NOW, force=True) is None


def test_a_plan_is_dropped_if_the_log_changed_meanwhile(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for i in range(20):
        put(plog, (b"k", b"v%d" % i))
    plan = plan_compaction(plog, NOW, force=True)
    assert plan is not None
    plog.delete_records(plog.segments[1].base_offset)
    assert not plog.install_cleaned(plan)
    assert not list(tmp_path.glob("*.cleaned"))
    assert len(read_all(plog)) == 20 - plog.log_start_offset


def test_only_an_installed_plan_is_logged_as_compacted(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for i in range(20):
        put(plog, (b"k", b"v%d" % i))
    stale = plan_compaction(plog, NOW, force=True)
    assert stale is not None
    plog.delete_records(plog.segments[1].base_offset)
    with capture_logs() as refused:
        assert not install(plog, stale)
    assert [e["event"] for e in refused] == ["cleaner.plan_discarded"]
    with capture_logs() as done:
        assert compact(plog, NOW, force=True) is not None
    assert [e["event"] for e in done] == ["log.compacted"]


def test_an_unfinished_compaction_is_discarded_on_open(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for i in range(20):
        put(plog, (b"k", b"v%d" % i))
    assert plan_compaction(plog, NOW, force=True) is not None  # crash before install
    assert list(tmp_path.glob("*.cleaned"))
    again = compacted_log(tmp_path)
    assert not list(tmp_path.glob("*.cleaned"))
    assert len(read_all(again)) == 20
