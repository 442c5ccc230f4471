"""A crash after any record of a transaction's life: the restarted coordinator keeps every decision
that was acknowledged and finishes or aborts the rest (virtual time; the log is the sink's records)."""

from __future__ import annotations

import pytest

from kafkito.broker.transactions import TransactionResult, TxnState
from kafkito.broker.transactions.metadata import TxnLogRecord
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import Harness, tp

PARTITIONS = (tp("a", 0), tp("a", 1), tp("b", 0))


def _full_log(commit: bool) -> list[TxnLogRecord]:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=10_000)
    assert h.add(pid, epoch, *PARTITIONS[:2]) is ErrorCode.NONE
    assert h.add(pid, epoch, PARTITIONS[2]) is ErrorCode.NONE
    assert h.end(pid, epoch, commit=commit) is ErrorCode.NONE
    return list(h.sink.records)


@pytest.mark.parametrize("commit", [True, False])
@pytest.mark.parametrize("crash_after", range(6))
def test_restart_after_any_record(commit: bool, crash_after: int) -> None:
    records = _full_log(commit)
    assert len(records) == 5  # Empty, Ongoing, Ongoing, Prepare*, Complete*
    survived = records[:crash_after]
    h = Harness()
    h.sink.records = list(survived)
    h.restart()
    h.clock.advance(30_000)  # past the transaction timeout, several abort scans
    if crash_after == 0:
        assert h.coordinator.transactions == {}
        return
    meta = h.state()
    decided = crash_after >= 4  # the Prepare* record was written: EndTxn had its answer
    if decided:
        expected = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        result = TransactionResult.COMMIT if commit else TransactionResult.ABORT
        assert meta.state is expected and meta.producer_epoch == 0
        # Prepared only: the markers are written (again) after the restart; complete: none needed.
        resent = set(PARTITIONS) if crash_after == 4 else set()
        assert {p for r, p in h.markers.written if r.result is result} == resent
    elif crash_after == 1:
        assert meta.state is TxnState.EMPTY  # nothing was open
    else:
        # An open transaction, never decided: aborted on timeout under a bumped epoch.
        assert (meta.state, meta.producer_epoch) == (TxnState.COMPLETE_ABORT, 1)
        open_partitions = set(PARTITIONS[:2]) if crash_after == 2 else set(PARTITIONS)
        assert {p for r, p in h.markers.written if r.result is TransactionResult.ABORT} == open_partitions
    if not (decided and commit):
        assert not any(r.result is TransactionResult.COMMIT for r in h.markers.requests)
