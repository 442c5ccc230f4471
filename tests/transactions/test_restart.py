"""Restart is a replay: the rebuilt coordinator equals the one that wrote the records, and finishes
what they left half done."""

from __future__ import annotations

from kafkito.broker.transactions import TransactionCoordinator, TransactionRecord, TxnState
from kafkito.broker.transactions.codec import decode_record, encode_record
from kafkito.broker.transactions.requests import InitProducerIdRequest, InitProducerIdResult
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import Harness, tp


def _history(h: Harness) -> None:
    a_pid, a_epoch = h.init_ok("a")
    assert h.add(a_pid, a_epoch, tp("x", 0), tp("y", 3), txn_id="a") is ErrorCode.NONE
    assert h.end(a_pid, a_epoch, txn_id="a") is ErrorCode.NONE
    b_pid, b_epoch = h.init_ok("b")
    assert h.add(b_pid, b_epoch, tp("x", 1), txn_id="b") is ErrorCode.NONE
    h.init_ok("c")
    h.clock.advance(1234)


def test_replay_rebuilds_every_transaction() -> None:
    h = Harness()
    _history(h)
    before = dict(h.coordinator.transactions)
    assert h.restart().transactions == before


def test_replay_through_the_wire_format_is_equal() -> None:
    h = Harness()
    _history(h)
    encoded = [encode_record(r) for r in h.sink.records]
    decoded = [decode_record(k, v) for k, v in encoded]
    rebuilt = TransactionCoordinator(h.config, h.clock, h.timer, h.markers, h.ids)
    rebuilt.load([r for r in decoded if r is not None])
    assert rebuilt.transactions == h.coordinator.transactions
    rebuilt.shutdown()


def test_prepared_commit_is_completed_after_restart() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, tp("a"), tp("b")) is ErrorCode.NONE
    assert h.end(pid, epoch) is ErrorCode.NONE
    h.markers.defer = False
    h.restart()  # the markers in flight were lost with the old coordinator
    meta = h.state()
    assert meta.state is TxnState.COMPLETE_COMMIT
    assert h.markers.marked(pid, epoch) == {tp("a"), tp("b")}


def test_ongoing_transaction_is_aborted_when_it_times_out_after_restart() -> None:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=15_000)
    assert h.add(pid, epoch, tp("a")) is ErrorCode.NONE
    h.restart()
    assert h.state().state is TxnState.ONGOING
    h.clock.advance(20_000)
    assert (h.state().state, h.state().producer_epoch) == (TxnState.COMPLETE_ABORT, epoch + 1)


def test_ongoing_transaction_is_aborted_when_the_producer_reinitialises_after_restart() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, tp("a")) is ErrorCode.NONE
    h.restart()
    first = h.init()
    assert first is not None and first.error is ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.init_ok() == (pid, epoch + 2)
    assert h.markers.marked(pid, epoch + 1) == {tp("a")}


def test_old_coordinator_answers_not_coordinator_after_shutdown() -> None:
    h = Harness(defer_writes=True)
    out: list[InitProducerIdResult] = []
    h.coordinator.init_producer_id(InitProducerIdRequest("txn-a", 60_000), out.append)
    h.coordinator.shutdown()
    h.sink.complete_writes()
    assert [r.error for r in out] == [ErrorCode.NOT_COORDINATOR]
    assert h.coordinator.transactions == {}
    h.sink.defer_writes = False
    rebuilt = h.restart()
    assert isinstance(h.sink.records[0], TransactionRecord)
    assert "txn-a" in rebuilt.transactions  # the record reached the log: the new coordinator has it
