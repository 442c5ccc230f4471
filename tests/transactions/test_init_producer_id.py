"""InitProducerId with a transactional id: new ids, epoch bumps, fencing, exhaustion, KIP-360."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kafkito.broker.producer_ids import ProducerIdManager
from kafkito.broker.transactions import (
    ProducerIdAllocator,
    TransactionCoordinator,
    TransactionRecord,
    TransactionResult,
    TxnState,
)
from kafkito.broker.transactions.config import TransactionConfig
from kafkito.broker.transactions.metadata import MAX_PRODUCER_EPOCH
from kafkito.broker.transactions.requests import InitProducerIdRequest, InitProducerIdResult
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TIMEOUT_MS, TXN, Harness, tp


def test_new_id_gets_a_producer_id_at_epoch_0_once_written() -> None:
    h = Harness()
    result = h.init()
    assert result is not None and result.error is ErrorCode.NONE
    assert result.producer_epoch == 0
    meta = h.state()
    assert (meta.producer_id, meta.producer_epoch, meta.state) == (result.producer_id, 0, TxnState.EMPTY)
    assert h.sink.records == [TransactionRecord(meta)]


def test_answer_waits_for_the_append() -> None:
    h = Harness(defer_writes=True)
    out: list[InitProducerIdResult] = []
    h.coordinator.init_producer_id(InitProducerIdRequest(TXN, TIMEOUT_MS), out.append)
    assert out == [] and TXN not in h.coordinator.transactions
    concurrent = h.init()  # a second request while the first write is in flight
    assert concurrent is not None and concurrent.error is ErrorCode.CONCURRENT_TRANSACTIONS
    h.sink.complete_writes()
    assert [r.error for r in out] == [ErrorCode.NONE]
    assert h.state().producer_epoch == out[0].producer_epoch == 0


def test_reinit_bumps_the_epoch_and_fences_the_old_producer() -> None:
    h = Harness()
    pid, e0 = h.init_ok()
    pid2, e1 = h.init_ok()
    assert (pid2, e1) == (pid, e0 + 1)
    assert h.add(pid, e0) is ErrorCode.PRODUCER_FENCED
    assert h.end(pid, e0) is ErrorCode.PRODUCER_FENCED
    assert h.add(pid, e1) is ErrorCode.NONE


def test_reinit_with_an_ongoing_transaction_aborts_it_first() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, tp("t", 0), tp("t", 1)) is ErrorCode.NONE
    result = h.init()
    assert result is not None and result.error is ErrorCode.CONCURRENT_TRANSACTIONS
    meta = h.state()
    assert (meta.state, meta.producer_epoch) == (TxnState.PREPARE_ABORT, epoch + 1)
    request = h.markers.parked[0][0]
    assert (request.result, request.producer_epoch, request.partitions) == (
        TransactionResult.ABORT,
        epoch + 1,
        frozenset({tp("t", 0), tp("t", 1)}),
    )
    # Until the markers are in, the new producer keeps being told to retry.
    retry = h.init()
    assert retry is not None and retry.error is ErrorCode.CONCURRENT_TRANSACTIONS
    h.markers.complete()
    assert h.state().state is TxnState.COMPLETE_ABORT
    assert h.init_ok() == (pid, epoch + 2)
    assert h.end(pid, epoch, commit=True) is ErrorCode.PRODUCER_FENCED


def test_invalid_timeouts_and_ids() -> None:
    h = Harness(TransactionConfig(max_timeout_ms=1000))
    for timeout in (0, -1, 1001):
        result = h.init(timeout_ms=timeout)
        assert result is not None and result.error is ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert h.init(timeout_ms=1000) is not None
    empty = h.init("")
    assert empty is not None and empty.error is ErrorCode.INVALID_REQUEST


def test_no_transactional_id_gets_a_fresh_producer_id_each_time() -> None:
    h = Harness()
    a, b = h.init(None), h.init(None)
    assert a is not None and b is not None
    assert a.error is b.error is ErrorCode.NONE
    assert a.producer_id != b.producer_id and a.producer_epoch == b.producer_epoch == 0
    assert h.sink.records == []


def test_loading_partition_answers_load_in_progress() -> None:
    h = Harness()
    h.sink.loading.add(TXN)
    result = h.init()
    assert result is not None and result.error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert h.add(1, 0) is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert h.end(1, 0) is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_failed_append_changes_nothing_and_maps_the_error() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    h.sink.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    result = h.init()
    assert result is not None and result.error is ErrorCode.COORDINATOR_NOT_AVAILABLE
    h.sink.fail_with = ErrorCode.NOT_LEADER_OR_FOLLOWER
    result = h.init()
    assert result is not None and result.error is ErrorCode.NOT_COORDINATOR
    h.sink.fail_with = ErrorCode.CORRUPT_MESSAGE
    result = h.init()
    assert result is not None and result.error is ErrorCode.UNKNOWN_SERVER_ERROR
    assert h.state().producer_epoch == epoch
    h.sink.fail_with = ErrorCode.NONE
    assert h.init_ok() == (pid, epoch + 1)


def _exhaust(h: Harness) -> tuple[int, int]:
    pid, _ = h.init_ok()
    meta = replace(h.state(), producer_epoch=MAX_PRODUCER_EPOCH - 1)
    h.coordinator.replay(TransactionRecord(meta))
    return pid, MAX_PRODUCER_EPOCH - 1


def test_exhausted_epoch_rotates_the_producer_id() -> None:
    h = Harness()
    pid, _ = _exhaust(h)
    new_pid, epoch = h.init_ok()
    assert new_pid != pid and epoch == 0
    meta = h.state()
    assert meta.previous_producer_id == pid
    assert h.sink.records[-1] == TransactionRecord(meta)


def test_fence_at_an_exhausted_epoch_then_rotation() -> None:
    h = Harness()
    pid, epoch = _exhaust(h)
    assert h.add(pid, epoch) is ErrorCode.NONE
    result = h.init()
    assert result is not None and result.error is ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.state().producer_epoch == MAX_PRODUCER_EPOCH  # the fence used the spare epoch
    assert h.state().state is TxnState.COMPLETE_ABORT
    new_pid, new_epoch = h.init_ok()
    assert new_pid != pid and new_epoch == 0


def test_kip360_recovering_producer_with_its_current_epoch_bumps() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    result = h.init(producer_id=pid, epoch=epoch)
    assert result is not None and (result.error, result.producer_id, result.producer_epoch) == (
        ErrorCode.NONE,
        pid,
        epoch + 1,
    )
    # The same request again (its answer was lost): the epoch it already got, not another bump.
    again = h.init(producer_id=pid, epoch=epoch)
    assert again is not None and (again.error, again.producer_epoch) == (ErrorCode.NONE, epoch + 1)


def test_kip360_stale_epoch_or_foreign_producer_id_is_fenced() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    h.init_ok()
    h.init_ok()
    stale = h.init(producer_id=pid, epoch=epoch)
    assert stale is not None and stale.error is ErrorCode.PRODUCER_FENCED
    foreign = h.init(producer_id=pid + 77, epoch=0)
    assert foreign is not None and foreign.error is ErrorCode.PRODUCER_FENCED


def test_kip360_new_id_accepts_any_expected_producer() -> None:
    h = Harness()
    result = h.init(producer_id=42, epoch=3)
    assert result is not None and result.error is ErrorCode.NONE and result.producer_epoch == 0


def test_kip360_retry_after_rotation_gets_the_new_producer_id() -> None:
    h = Harness()
    pid, epoch = _exhaust(h)
    first = h.init(producer_id=pid, epoch=epoch)
    assert first is not None and first.error is ErrorCode.NONE and first.producer_id != pid
    retry = h.init(producer_id=pid, epoch=epoch)
    assert retry is not None and (retry.error, retry.producer_id, retry.producer_epoch) == (
        ErrorCode.NONE,
        first.producer_id,
        0,
    )


def test_requests_of_the_fenced_producer_wait_while_the_fence_is_written() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, tp("a")) is ErrorCode.NONE
    h.sink.defer_writes = True
    assert h.init() is None  # the fence (PrepareAbort, epoch + 1) is being written
    assert h.end(pid, epoch, commit=True) is ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.add(pid, epoch, tp("b")) is ErrorCode.CONCURRENT_TRANSACTIONS
    h.sink.defer_writes = False
    h.sink.complete_writes()
    assert h.state().state is TxnState.COMPLETE_ABORT
    assert h.end(pid, epoch, commit=True) is ErrorCode.PRODUCER_FENCED


def test_the_brokers_producer_id_manager_is_an_allocator(tmp_path: Path) -> None:
    allocator: ProducerIdAllocator = ProducerIdManager(tmp_path)
    h = Harness()
    coordinator = TransactionCoordinator(h.config, h.clock, h.timer, h.markers, allocator, h.sink)
    out: list[InitProducerIdResult] = []
    coordinator.init_producer_id(InitProducerIdRequest("x", TIMEOUT_MS), out.append)
    coordinator.init_producer_id(InitProducerIdRequest("y", TIMEOUT_MS), out.append)
    assert [(r.error, r.producer_id, r.producer_epoch) for r in out] == [
        (ErrorCode.NONE, 0, 0),
        (ErrorCode.NONE, 1, 0),
    ]
    coordinator.shutdown()
