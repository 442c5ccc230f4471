"""AddPartitionsToTxn (and verify-only), AddOffsetsToTxn and EndTxn, through markers to Complete*."""

from __future__ import annotations

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.offsets.partitioner import partition_for
from kafkito.broker.transactions import TransactionRecord, TransactionResult, TxnState
from kafkito.broker.transactions.errors import for_version
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import Harness, tp


def _open(h: Harness, *partitions: TopicPartition) -> tuple[int, int]:
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, *partitions) is ErrorCode.NONE
    return pid, epoch


def test_add_partitions_opens_the_transaction_at_now() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    h.clock.advance(500)
    assert h.add(pid, epoch, tp("a", 0)) is ErrorCode.NONE
    meta = h.state()
    assert (meta.state, meta.partitions, meta.start_ms) == (TxnState.ONGOING, frozenset({tp("a", 0)}), 500)
    h.clock.advance(100)
    assert h.add(pid, epoch, tp("b", 1)) is ErrorCode.NONE
    meta = h.state()
    assert meta.partitions == {tp("a", 0), tp("b", 1)} and meta.start_ms == 500 and meta.last_update_ms == 600


def test_adding_known_partitions_writes_nothing() -> None:
    h = Harness()
    pid, epoch = _open(h, tp("a", 0), tp("a", 1))
    written = len(h.sink.records)
    assert h.add(pid, epoch, tp("a", 1)) is ErrorCode.NONE
    assert len(h.sink.records) == written


def test_add_partitions_errors() -> None:
    h = Harness()
    assert h.add(5, 0) is ErrorCode.INVALID_PRODUCER_ID_MAPPING  # unknown id
    pid, epoch = h.init_ok()
    assert h.add(pid + 1, epoch) is ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert h.add(pid, epoch + 1) is ErrorCode.PRODUCER_FENCED
    assert h.add(pid, epoch, txn_id="") is ErrorCode.INVALID_REQUEST


def test_add_partitions_while_markers_are_written_is_concurrent() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = _open(h, tp("a"))
    assert h.end(pid, epoch) is ErrorCode.NONE
    assert h.add(pid, epoch, tp("b")) is ErrorCode.CONCURRENT_TRANSACTIONS
    h.markers.complete()
    assert h.add(pid, epoch, tp("b")) is ErrorCode.NONE
    assert h.state().partitions == {tp("b")}  # a new transaction: the old partitions were cleared


def test_add_offsets_adds_the_groups_offsets_partition() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert h.add_offsets(pid, epoch, "my-group") is ErrorCode.NONE
    assert h.state().partitions == {tp("__consumer_offsets", partition_for("my-group", 50))}
    assert h.add_offsets(pid, epoch + 3, "my-group") is ErrorCode.PRODUCER_FENCED


def test_commit_goes_through_prepare_markers_and_complete() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = _open(h, tp("a", 0), tp("b", 2))
    assert h.end(pid, epoch, commit=True) is ErrorCode.NONE  # answered once PrepareCommit is durable
    assert h.state().state is TxnState.PREPARE_COMMIT
    assert h.end(pid, epoch, commit=True) is ErrorCode.CONCURRENT_TRANSACTIONS  # retried meanwhile
    assert h.end(pid, epoch, commit=False) is ErrorCode.INVALID_TXN_STATE
    request = h.markers.parked[0][0]
    assert (request.result, request.producer_id, request.producer_epoch) == (
        TransactionResult.COMMIT,
        pid,
        epoch,
    )
    h.markers.complete()
    meta = h.state()
    assert (meta.state, meta.partitions) == (TxnState.COMPLETE_COMMIT, frozenset())
    states = [r.metadata.state for r in h.sink.records if isinstance(r, TransactionRecord)]
    assert states[-3:] == [TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.COMPLETE_COMMIT]


def test_abort_completes_with_abort_markers() -> None:
    h = Harness()
    pid, epoch = _open(h, tp("a"))
    assert h.end(pid, epoch, commit=False) is ErrorCode.NONE
    assert h.state().state is TxnState.COMPLETE_ABORT
    assert h.markers.requests[-1].result is TransactionResult.ABORT


def test_retried_end_txn_after_completion() -> None:
    h = Harness()
    pid, epoch = _open(h)
    assert h.end(pid, epoch, commit=True) is ErrorCode.NONE
    assert h.end(pid, epoch, commit=True) is ErrorCode.NONE
    assert h.end(pid, epoch, commit=False) is ErrorCode.INVALID_TXN_STATE
    pid, epoch = _open(h)
    assert h.end(pid, epoch, commit=False) is ErrorCode.NONE
    assert h.end(pid, epoch, commit=False) is ErrorCode.NONE
    assert h.end(pid, epoch, commit=True) is ErrorCode.INVALID_TXN_STATE


def test_end_txn_errors() -> None:
    h = Harness()
    assert h.end(1, 0) is ErrorCode.INVALID_PRODUCER_ID_MAPPING
    pid, epoch = h.init_ok()
    assert h.end(pid, epoch) is ErrorCode.INVALID_TXN_STATE  # Empty: nothing to end
    assert h.end(pid + 1, epoch) is ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert h.end(pid, epoch - 1) is ErrorCode.PRODUCER_FENCED
    h.sink.defer_writes = True
    assert h.add(pid, epoch) is None
    assert h.end(pid, epoch) is ErrorCode.CONCURRENT_TRANSACTIONS  # the add is still being written


def test_failed_prepare_append_sends_no_markers() -> None:
    h = Harness()
    pid, epoch = _open(h, tp("a"))
    h.sink.fail_with = ErrorCode.KAFKA_STORAGE_ERROR
    assert h.end(pid, epoch) is ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert h.markers.requests == [] and h.state().state is TxnState.ONGOING
    h.sink.fail_with = ErrorCode.NONE
    assert h.end(pid, epoch) is ErrorCode.NONE and h.state().state is TxnState.COMPLETE_COMMIT


def test_failed_markers_are_retried_after_the_backoff() -> None:
    h = Harness()
    h.markers.failures = {tp("b"): ErrorCode.NOT_LEADER_OR_FOLLOWER}
    h.markers.failures_left = 2
    pid, epoch = _open(h, tp("a"), tp("b"))
    assert h.end(pid, epoch) is ErrorCode.NONE
    assert h.state().state is TxnState.PREPARE_COMMIT
    h.clock.advance(h.config.marker_retry_backoff_ms)
    assert h.state().state is TxnState.PREPARE_COMMIT
    assert h.markers.requests[-1].partitions == {tp("b")}  # only the partition that failed
    h.clock.advance(h.config.marker_retry_backoff_ms)
    assert h.state().state is TxnState.COMPLETE_COMMIT
    assert h.markers.marked(pid, epoch) == {tp("a"), tp("b")}


def test_a_deleted_partition_needs_no_marker() -> None:
    h = Harness()
    h.markers.failures = {tp("gone"): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    h.markers.failures_left = 100
    pid, epoch = _open(h, tp("a"), tp("gone"))
    assert h.end(pid, epoch) is ErrorCode.NONE
    assert h.state().state is TxnState.COMPLETE_COMMIT


def test_failed_complete_record_is_written_again() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = _open(h, tp("a"))
    assert h.end(pid, epoch) is ErrorCode.NONE
    h.sink.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    h.markers.complete()
    assert h.state().state is TxnState.PREPARE_COMMIT
    h.sink.fail_with = ErrorCode.NONE
    h.clock.advance(h.config.marker_retry_backoff_ms)
    assert h.state().state is TxnState.COMPLETE_COMMIT


def test_verify_only_checks_the_open_transaction() -> None:
    h = Harness()
    c = h.coordinator
    assert c.verify_partitions("txn-a", 1, 0, [tp("a")]) == {tp("a"): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    pid, epoch = _open(h, tp("a"))
    assert c.verify_partitions("txn-a", pid, epoch, [tp("a"), tp("b")]) == {
        tp("a"): ErrorCode.NONE,
        tp("b"): ErrorCode.TRANSACTION_ABORTABLE,
    }
    assert c.verify_partitions("txn-a", pid, epoch + 1, [tp("a")]) == {tp("a"): ErrorCode.PRODUCER_FENCED}
    assert len(h.sink.records) == 2  # verification writes nothing
    h.markers.defer = True
    assert h.end(pid, epoch) is ErrorCode.NONE
    assert c.verify_partitions("txn-a", pid, epoch, [tp("a")]) == {tp("a"): ErrorCode.CONCURRENT_TRANSACTIONS}
    h.markers.complete()
    assert c.verify_partitions("txn-a", pid, epoch, [tp("a")]) == {tp("a"): ErrorCode.TRANSACTION_ABORTABLE}


def test_errors_as_old_versions_see_them() -> None:
    fenced = ErrorCode.PRODUCER_FENCED
    assert for_version("InitProducerId", 3, fenced) is ErrorCode.INVALID_PRODUCER_EPOCH
    assert for_version("InitProducerId", 4, fenced) is fenced
    for api in ("AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        assert for_version(api, 1, fenced) is ErrorCode.INVALID_PRODUCER_EPOCH
        assert for_version(api, 2, fenced) is fenced
    assert for_version("EndTxn", 0, ErrorCode.INVALID_TXN_STATE) is ErrorCode.INVALID_TXN_STATE
    abortable = ErrorCode.TRANSACTION_ABORTABLE
    for api, since in (("Produce", 11), ("AddPartitionsToTxn", 5), ("AddOffsetsToTxn", 4), ("EndTxn", 4)):
        assert for_version(api, since - 1, abortable) is ErrorCode.INVALID_TXN_STATE
        assert for_version(api, since, abortable) is abortable
