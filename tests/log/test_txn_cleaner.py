"""Compaction of transactional data: aborted records go (and never shadow a committed value), markers
stay, and nothing at or above the last stable offset is cleaned."""

from __future__ import annotations

from pathlib import Path

from kafkito.broker.log.cleaner import compact
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import Rec, batch, config, read_all

NOW = 1_800_000_000_000
DAY = 86_400_000
TS = NOW - 2 * DAY
A, B = 9001, 9002


def compacted_log(path: Path) -> PartitionLog:
    cfg = config(cleanup_policy=frozenset({"compact"}), segment_bytes=400)
    return PartitionLog(path, cfg, time_ms=lambda: TS)


class Txn:
    def __init__(self, plog: PartitionLog, pid: int) -> None:
        self.plog, self.pid, self.seq = plog, pid, 0

    def put(self, *pairs: tuple[bytes, bytes]) -> None:
        recs = [Rec(k, v, TS) for k, v in pairs]
        self.plog.append(batch(recs, producer_id=self.pid, epoch=0, sequence=self.seq, transactional=True))
        self.seq += len(recs)

    def end(self, commit: bool) -> int:
        return self.plog.append_marker(self.pid, 0, commit)


def values(plog: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of the data records (the markers' control records left out)."""
    markers = {h.base_offset for h in plog.batch_headers() if h.is_control}
    return [(o, r.key, r.value) for o, r in read_all(plog) if o not in markers]


def aborted_and_committed(plog: PartitionLog) -> tuple[int, int]:
    """A committed transaction (k=good, x=1), then an aborted one (k=bad, y=2), a plain record, a roll
    and one record in the active segment; the two markers' offsets."""
    committed, aborted = Txn(plog, A), Txn(plog, B)
    committed.put((b"k", b"good"), (b"x", b"1"))
    commit_at = committed.end(True)
    aborted.put((b"k", b"bad"), (b"y", b"2"))  # a later value of k, but aborted
    abort_at = aborted.end(False)
    plog.append(batch([Rec(b"z", b"plain", TS)]))
    plog.roll()
    plog.append(batch([Rec(b"w", b"tail", TS)]))
    return commit_at, abort_at


def markers(plog: PartitionLog) -> list[int]:
    return [h.base_offset for h in plog.batch_headers() if h.is_control]


def test_aborted_records_go_and_a_marker_stays_while_its_records_do(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    commit_at, abort_at = aborted_and_committed(plog)
    assert markers(plog) == [commit_at, abort_at]
    assert compact(plog, NOW, force=True) is not None  # both markers are older than delete.retention.ms
    got = values(plog)
    assert (0, b"k", b"good") in got and (1, b"x", b"1") in got
    assert all(value not in (b"bad", b"2") for _, _, value in got)
    # The COMMIT marker's records remain, so it stays; the ABORT marker's are gone, and so is it.
    assert markers(plog) == [commit_at]
    # Reopened: replaying what is left gives a consistent state, and no aborted records to name.
    plog.close()
    again = compacted_log(tmp_path)
    assert values(again) == got
    assert again.last_stable_offset == again.high_watermark
    assert again.aborted_transactions(0, again.high_watermark) == []
    assert list(tmp_path.glob("*.txnindex")) == []


def test_a_marker_with_no_records_left_stays_until_delete_retention_passes(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    commit_at, abort_at = aborted_and_committed(plog)
    assert compact(plog, TS + 1000, force=True) is not None  # delete.retention.ms (a day) not yet passed
    assert markers(plog) == [commit_at, abort_at]
    assert plog.aborted_transactions(0, plog.high_watermark) == [(B, commit_at + 1)]
    assert all(value not in (b"bad", b"2") for _, _, value in values(plog))


def test_nothing_from_an_open_transaction_on_is_cleaned(tmp_path: Path) -> None:
    plog = compacted_log(tmp_path)
    for i in range(3):
        plog.append(batch([Rec(b"k", b"old%d" % i, TS)]))
        plog.roll()
    open_txn = Txn(plog, A)
    open_txn.put((b"k", b"pending"))
    plog.roll()
    for i in range(3):
        plog.append(batch([Rec(b"k", b"late%d" % i, TS)]))
        plog.roll()
    lso = plog.last_stable_offset
    assert lso == 3
    assert compact(plog, NOW, force=True) is not None
    got = values(plog)
    # Below the LSO only the newest value of k in the cleaned range survives; above it, everything.
    assert [v for o, _, v in got if o < lso] == [b"old2"]
    assert [v for o, _, v in got if o >= lso] == [b"pending", b"late0", b"late1", b"late2"]
    open_txn.end(False)
    assert compact(plog, NOW, force=True) is not None
    assert [v for _, _, v in values(plog)] == [b"late2"]
