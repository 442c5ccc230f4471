"""Each request against each durable state: the answer and the state it leads to, as one table."""

from __future__ import annotations

import pytest

from kafkito.broker.transactions import TransactionMetadata, TransactionRecord, TxnState
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TXN, Harness, tp

S = TxnState
E = ErrorCode
PID, EPOCH = 500, 3


def _in_state(state: TxnState) -> Harness:
    h = Harness()
    h.markers.defer = True  # a Prepare* stays prepared
    partitions = frozenset() if state is S.EMPTY or state.is_complete else frozenset({tp("a")})
    meta = TransactionMetadata(TXN, PID, EPOCH, 60_000, state, partitions, last_update_ms=0, start_ms=0)
    h.coordinator.replay(TransactionRecord(meta))
    return h


@pytest.mark.parametrize(
    ("state", "commit", "answer", "after"),
    [
        (S.EMPTY, True, E.INVALID_TXN_STATE, S.EMPTY),
        (S.EMPTY, False, E.INVALID_TXN_STATE, S.EMPTY),
        (S.ONGOING, True, E.NONE, S.PREPARE_COMMIT),
        (S.ONGOING, False, E.NONE, S.PREPARE_ABORT),
        (S.PREPARE_COMMIT, True, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT),
        (S.PREPARE_COMMIT, False, E.INVALID_TXN_STATE, S.PREPARE_COMMIT),
        (S.PREPARE_ABORT, True, E.INVALID_TXN_STATE, S.PREPARE_ABORT),
        (S.PREPARE_ABORT, False, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT),
        (S.COMPLETE_COMMIT, True, E.NONE, S.COMPLETE_COMMIT),
        (S.COMPLETE_COMMIT, False, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT),
        (S.COMPLETE_ABORT, True, E.INVALID_TXN_STATE, S.COMPLETE_ABORT),
        (S.COMPLETE_ABORT, False, E.NONE, S.COMPLETE_ABORT),
    ],
)
def test_end_txn(state: TxnState, commit: bool, answer: ErrorCode, after: TxnState) -> None:
    h = _in_state(state)
    assert h.end(PID, EPOCH, commit) is answer
    assert h.state().state is after
    assert h.end(PID, EPOCH + 1, commit) is E.PRODUCER_FENCED
    assert h.end(PID + 1, EPOCH, commit) is E.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize(
    ("state", "answer", "after"),
    [
        (S.EMPTY, E.NONE, S.ONGOING),
        (S.ONGOING, E.NONE, S.ONGOING),
        (S.PREPARE_COMMIT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT),
        (S.PREPARE_ABORT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT),
        (S.COMPLETE_COMMIT, E.NONE, S.ONGOING),
        (S.COMPLETE_ABORT, E.NONE, S.ONGOING),
    ],
)
def test_add_partitions(state: TxnState, answer: ErrorCode, after: TxnState) -> None:
    h = _in_state(state)
    assert h.add(PID, EPOCH, tp("b")) is answer
    assert h.state().state is after
    assert h.add(PID, EPOCH - 1, tp("b")) is E.PRODUCER_FENCED


@pytest.mark.parametrize(
    ("state", "answer", "after", "epoch"),
    [
        (S.EMPTY, E.NONE, S.EMPTY, EPOCH + 1),
        (S.ONGOING, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT, EPOCH + 1),  # fenced, aborting
        (S.PREPARE_COMMIT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT, EPOCH),
        (S.PREPARE_ABORT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT, EPOCH),
        (S.COMPLETE_COMMIT, E.NONE, S.EMPTY, EPOCH + 1),
        (S.COMPLETE_ABORT, E.NONE, S.EMPTY, EPOCH + 1),
    ],
)
def test_init_producer_id(state: TxnState, answer: ErrorCode, after: TxnState, epoch: int) -> None:
    h = _in_state(state)
    result = h.init()
    assert result is not None and result.error is answer
    meta = h.state()
    assert (meta.state, meta.producer_id, meta.producer_epoch) == (after, PID, epoch)
    if answer is E.NONE:
        assert (result.producer_id, result.producer_epoch) == (PID, epoch)
