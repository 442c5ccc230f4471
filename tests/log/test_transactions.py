"""Transactions on the log: transactional batches, COMMIT/ABORT markers, the last stable offset, the
aborted-transactions index (in memory and in `.txnindex` files) across rolls, restarts, retention
and truncation, and the fencing errors."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from kafkito.broker.log.errors import (
    InvalidProducerEpoch,
    InvalidRecord,
    InvalidTxnState,
    TransactionCoordinatorFenced,
)
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.log.txn_index import AbortedTxn, read_entries

from .helpers import batch, config, records

A, B, C = 7001, 7002, 7003


class Producer:
    """A transactional producer's batches for one partition: sequences continue across transactions."""

    def __init__(self, plog: PartitionLog, pid: int, epoch: int = 0) -> None:
        self.plog, self.pid, self.epoch, self.seq = plog, pid, epoch, 0

    def send(self, n: int = 2) -> int:
        raw = batch(
            records(n, start=self.seq, ts=now_ms()),
            producer_id=self.pid,
            epoch=self.epoch,
            sequence=self.seq,
            transactional=True,
        )
        self.seq += n
        return self.plog.append(raw).base_offset

    def end(self, commit: bool, coordinator_epoch: int = 0) -> int:
        return self.plog.append_marker(self.pid, self.epoch, commit, coordinator_epoch)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stored_batches(plog: PartitionLog, start: int = 0) -> list[DefaultRecordBatch]:
    """Every stored batch from `start`, read segment by segment as a consumer would."""
    out: list[DefaultRecordBatch] = []
    offset = start
    while offset < plog.log_end_offset:
        mem = MemoryRecords(plog.read(offset, 1 << 30))
        while mem.has_next():
            out.append(mem.next_batch())
        offset = out[-1].base_offset + out[-1].last_offset_delta + 1
    return out


def test_a_marker_is_kafkas_control_batch(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(), leader_epoch=3)
    p = Producer(plog, A, epoch=5)
    p.send(3)
    commit_at = p.end(True, coordinator_epoch=9)
    abort_at = Producer(plog, B).end(False, coordinator_epoch=2)
    assert (commit_at, abort_at) == (3, 4)
    data, commit, abort = stored_batches(plog)
    assert data.is_transactional and not data.is_control_batch
    for b, pid, epoch in ((commit, A, 5), (abort, B, 0)):
        assert b.validate_crc()
        assert b.is_transactional and b.is_control_batch
        assert (b.producer_id, b.producer_epoch, b.base_sequence, b.compression_type) == (pid, epoch, -1, 0)
    [c], [a] = list(commit), list(abort)  # one record each (a batch iterates once)
    assert c.offset == 3 and a.offset == 4
    assert struct.unpack(">hh", c.key) == (0, 1) and struct.unpack(">hi", c.value) == (0, 9)
    assert struct.unpack(">hh", a.key) == (0, 0) and struct.unpack(">hi", a.value) == (0, 2)
    assert not c.headers and c.commit and a.abort
    assert {h.partition_leader_epoch for h in plog.batch_headers()} == {3}


def test_the_lso_waits_for_the_earliest_open_transaction(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    a, b = Producer(plog, A), Producer(plog, B)
    assert plog.last_stable_offset == 0
    plog.append(batch(2))  # plain records before any transaction: stable
    assert plog.last_stable_offset == 2
    assert a.send() == 2
    assert b.send() == 4
    a.send()
    plog.append(batch(1))  # plain records inside the open range are held back too
    assert (plog.last_stable_offset, plog.high_watermark) == (2, 9)
    assert plog.read(0, 1 << 20, plog.last_stable_offset) == plog.read(0, 1 << 20, 2)
    a_end = a.end(True)  # B still open from 4
    assert plog.last_stable_offset == 4
    b_end = b.end(False)
    assert plog.last_stable_offset == plog.high_watermark == b_end + 1
    assert plog.aborted_transactions(0, plog.high_watermark) == [(B, 4)]
    assert plog.aborted_entries(0, 100) == [AbortedTxn(B, 4, b_end, b_end + 1)]
    assert a_end == 9
    # A marker with no open transaction is still written, and changes nothing else.
    assert a.end(False) == b_end + 1
    assert plog.aborted_transactions(0, 100) == [(B, 4)]


def test_aborted_transactions_overlapping_a_range(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    a, b = Producer(plog, A), Producer(plog, B)
    a.send()  # 0-1
    b.send()  # 2-3
    a_end = a.end(False)  # 4; B still open, so this entry's LSO is 2
    plog.append(batch(3))  # 5-7
    b.send()  # 8-9
    b_end = b.end(False)  # 10
    a.send()  # 11-12
    a_end2 = a.end(False)  # 13
    assert [tuple(e) for e in plog.aborted_entries(0, 100)] == [
        (A, 0, a_end, 2),
        (B, 2, b_end, 11),
        (A, 11, a_end2, 14),
    ]
    assert plog.aborted_transactions(0, 2) == [(A, 0)]
    assert plog.aborted_transactions(5, 8) == [(B, 2)]
    assert plog.aborted_transactions(11, 12) == [(A, 11)]
    assert plog.aborted_transactions(14, 20) == []
    assert plog.aborted_transactions(0, 20) == [(A, 0), (B, 2), (A, 11)]


def test_fencing_and_transaction_state_errors(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    p = Producer(plog, A, epoch=2)
    p.send()
    with pytest.raises(InvalidTxnState) as e:  # a plain batch while its transaction is open
        plog.append(batch(records(1, start=2), producer_id=A, epoch=2, sequence=2))
    assert e.value.code == 48
    with pytest.raises(InvalidProducerEpoch) as e2:
        plog.append(batch(records(1), producer_id=A, epoch=1, sequence=0, transactional=True))
    assert e2.value.code == 47
    with pytest.raises(InvalidProducerEpoch):
        plog.append_marker(A, 1, True)
    p.end(True, coordinator_epoch=4)
    with pytest.raises(TransactionCoordinatorFenced) as e3:
        plog.append_marker(A, 2, False, coordinator_epoch=3)
    assert e3.value.code == 52
    with pytest.raises(InvalidRecord):  # clients may not write control batches
        plog.append(bytes(stored_batches(plog)[-1]._buffer))
    end = plog.log_end_offset
    # A bumped epoch (the coordinator fencing the producer) ends the transaction too.
    p.send()
    assert plog.append_marker(A, 3, False, coordinator_epoch=4) == end + 2
    assert plog.last_stable_offset == plog.high_watermark
    assert plog.producers.entry(A).epoch == 3  # type: ignore[union-attr]


def test_producer_snapshot_and_expiry_keep_open_transactions(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(producer_id_expiration_ms=1000))
    a, b = Producer(plog, A, epoch=1), Producer(plog, B)
    a.send(3)
    b.send()
    b.end(True, coordinator_epoch=6)
    snap = {s.producer_id: s for s in plog.producer_snapshot()}
    assert (snap[A].producer_epoch, snap[A].last_sequence, snap[A].current_txn_start_offset) == (1, 2, 0)
    assert (snap[B].coordinator_epoch, snap[B].current_txn_start_offset, snap[B].last_sequence) == (6, -1, 1)
    plog.maybe_enforce_retention(now_ms=now_ms() + 10**6)
    assert [s.producer_id for s in plog.producer_snapshot()] == [A]
    assert plog.last_stable_offset == 0


def test_the_index_survives_rolls_and_restarts(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(segment_bytes=600))
    ends = []
    open_b = Producer(plog, B)
    for i in range(6):
        p = Producer(plog, A, epoch=i)
        p.send(3)
        if i == 3:
            open_b.send()
        ends.append(p.end(commit=i % 2 == 1))
    assert len(plog.segments) > 2
    entries = plog.aborted_entries(0, 1000)
    assert [e.last_offset for e in entries] == ends[0::2]
    lso = plog.last_stable_offset
    files = {p.name: read_entries(p) for p in sorted(tmp_path.glob("*.txnindex"))}
    assert sum(len(v or []) for v in files.values()) == 3
    for segment in plog.segments:  # each file holds the entries of the markers in its segment
        got = read_entries(segment.path.with_suffix(".txnindex")) or []
        assert all(segment.base_offset <= e.last_offset < segment.next_offset for e in got)
    # A crash (no close): everything is rebuilt from the segments.
    reopened = PartitionLog(tmp_path, config(segment_bytes=600))
    assert reopened.aborted_entries(0, 1000) == entries
    assert reopened.last_stable_offset == lso < reopened.high_watermark
    assert reopened.producers.ongoing() == {B: plog.producers.ongoing()[B]}
    reopened.close()
    again = PartitionLog(tmp_path, config(segment_bytes=600))
    assert again.aborted_entries(0, 1000) == entries
    assert {p.name: read_entries(p) for p in sorted(tmp_path.glob("*.txnindex"))} == files
    Producer(again, B).end(False)
    assert again.last_stable_offset == again.high_watermark


def test_a_stale_or_stray_index_file_is_rewritten_from_the_log(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    p = Producer(plog, A)
    p.send()
    p.end(False)
    plog.close()
    [index] = tmp_path.glob("*.txnindex")
    good = index.read_bytes()
    index.write_bytes(good[:-3])  # torn
    stray = tmp_path / f"{99:020d}.txnindex"
    stray.write_bytes(good)
    reopened = PartitionLog(tmp_path, config())
    assert index.read_bytes() == good and not stray.exists()
    assert reopened.aborted_transactions(0, 10) == [(A, 0)]


def test_retention_and_delete_records_drop_index_entries(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(segment_bytes=400))
    for i in range(4):
        p = Producer(plog, A, epoch=i)
        p.send(3)
        p.end(False)
        plog.roll()
    assert len(plog.aborted_entries(0, 100)) == 4
    plog.delete_records(plog.segments[2].base_offset)
    assert [e.first_offset for e in plog.aborted_entries(0, 100)] == [8, 12]
    assert len(list(tmp_path.glob("*.txnindex"))) == 2
    assert plog.aborted_transactions(0, 100) == [(A, 8), (A, 12)]


def test_truncation_reopens_the_transaction_its_marker_ended(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(segment_bytes=400))
    a = Producer(plog, A)
    a.send(3)
    plog.roll()
    a.send(3)
    end = a.end(False)
    assert plog.aborted_transactions(0, 100) == [(A, 0)]
    assert len(list(tmp_path.glob("*.txnindex"))) == 1
    plog.truncate_to(end)
    assert plog.aborted_transactions(0, 100) == []
    assert list(tmp_path.glob("*.txnindex")) == []
    assert plog.last_stable_offset == 0
    assert a.end(True) == end
    assert plog.last_stable_offset == plog.high_watermark


def test_the_open_transaction_bounds_the_lso_at_the_log_start(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    Producer(plog, A).send(3)
    plog.append(batch(3))
    plog.delete_records(4)
    assert plog.last_stable_offset == 4  # never below the log start, as Kafka bounds it


def test_a_torn_abort_marker_is_cut_and_its_index_entry_goes_with_it(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    p = Producer(plog, A)
    p.send(3)
    end = p.end(False)
    assert plog.aborted_transactions(0, 10) == [(A, 0)]
    [index] = tmp_path.glob("*.txnindex")
    segment = plog.segments[-1].path
    # A crash tore the marker's write (unflushed, so recovery cuts it); its index entry was written.
    with open(segment, "r+b") as f:
        f.truncate(segment.stat().st_size - 5)
    reopened = PartitionLog(tmp_path, config())
    assert reopened.log_end_offset == end + 1  # recovery keeps the offset the torn header claimed
    assert reopened.batch_headers()[-1].next_offset == end
    assert reopened.aborted_transactions(0, 10) == []
    assert not index.exists()
    assert reopened.last_stable_offset == 0  # the transaction is open again until a marker ends it
    assert reopened.append_marker(A, 0, False) == end + 1
    assert reopened.aborted_transactions(0, 10) == [(A, 0)]
