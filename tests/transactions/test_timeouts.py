"""transaction.timeout.ms aborts on the coordinator's own; transactional.id.expiration.ms removes ids."""

from __future__ import annotations

from kafkito.broker.transactions import TransactionConfig, TransactionResult, TransactionTombstone, TxnState
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TXN, Harness, tp

INTERVAL = 10_000  # transaction.abort.timed.out.transaction.cleanup.interval.ms


def test_defaults_are_kafkas() -> None:
    config = TransactionConfig()
    assert config.max_timeout_ms == 900_000
    assert config.transactional_id_expiration_ms == 604_800_000
    assert config.abort_timed_out_interval_ms == INTERVAL
    assert config.remove_expired_interval_ms == 3_600_000
    assert config.state_log_num_partitions == 50


def test_a_timed_out_transaction_is_aborted_with_a_bumped_epoch() -> None:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=15_000)
    assert h.add(pid, epoch, tp("a")) is ErrorCode.NONE
    h.clock.advance(INTERVAL)  # first scan at 10 s: 10 s old, not timed out
    assert h.state().state is TxnState.ONGOING
    h.clock.advance(INTERVAL)  # second scan at 20 s: past 15 s
    meta = h.state()
    assert (meta.state, meta.producer_epoch) == (TxnState.COMPLETE_ABORT, epoch + 1)
    assert h.markers.requests[-1].result is TransactionResult.ABORT
    assert h.markers.marked(pid, epoch + 1) == {tp("a")}
    # The producer that let it time out is fenced: it can neither commit nor go on.
    assert h.end(pid, epoch, commit=True) is ErrorCode.PRODUCER_FENCED
    assert h.add(pid, epoch, tp("b")) is ErrorCode.PRODUCER_FENCED
    assert h.init_ok() == (pid, epoch + 2)


def test_timeout_counts_from_the_start_not_the_last_add() -> None:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=12_000)
    assert h.add(pid, epoch, tp("a")) is ErrorCode.NONE
    h.clock.advance(9_000)
    assert h.add(pid, epoch, tp("b")) is ErrorCode.NONE
    h.clock.advance(11_000)  # the scan at 20 s: 20 s after the start
    assert h.state().state is TxnState.COMPLETE_ABORT


def test_idle_and_prepared_transactions_are_not_timed_out() -> None:
    h = Harness()
    h.markers.defer = True
    h.init_ok(txn_id="idle", timeout_ms=1_000)
    pid, epoch = h.init_ok(timeout_ms=1_000)
    assert h.add(pid, epoch) is ErrorCode.NONE
    assert h.end(pid, epoch) is ErrorCode.NONE  # PrepareCommit, markers parked
    h.clock.advance(5 * INTERVAL)
    assert h.state().state is TxnState.PREPARE_COMMIT and h.state().producer_epoch == epoch
    assert h.state("idle").state is TxnState.EMPTY


def test_expired_ids_are_removed_with_a_tombstone() -> None:
    config = TransactionConfig(transactional_id_expiration_ms=50_000, remove_expired_interval_ms=20_000)
    h = Harness(config)
    pid, epoch = h.init_ok(txn_id="old")
    h.clock.advance(30_000)
    h.init_ok(txn_id="recent")
    h.clock.advance(29_000)  # scans at 20 s and 40 s: nothing is 50 s old yet
    assert "old" in h.coordinator.transactions
    h.clock.advance(1_000)  # the scan at 60 s: "old" is 60 s old, "recent" 30 s
    assert "old" not in h.coordinator.transactions and "recent" in h.coordinator.transactions
    assert h.sink.records[-1] == TransactionTombstone("old")
    assert h.add(pid, epoch, txn_id="old") is ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_open_transactions_never_expire() -> None:
    config = TransactionConfig(
        transactional_id_expiration_ms=1_000, remove_expired_interval_ms=1_000, max_timeout_ms=10**9
    )
    h = Harness(config)
    h.markers.defer = True
    pid, epoch = h.init_ok(timeout_ms=10**8)
    assert h.add(pid, epoch) is ErrorCode.NONE
    h.clock.advance(10_000)
    assert h.state().state is TxnState.ONGOING
    assert h.end(pid, epoch) is ErrorCode.NONE
    h.clock.advance(10_000)
    assert h.state().state is TxnState.PREPARE_COMMIT
    h.markers.complete()
    h.clock.advance(2_000)
    assert TXN not in h.coordinator.transactions


def test_shutdown_stops_the_timers() -> None:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=1_000)
    assert h.add(pid, epoch) is ErrorCode.NONE
    h.coordinator.shutdown()
    h.clock.advance(10 * INTERVAL)
    assert h.state().state is TxnState.ONGOING
