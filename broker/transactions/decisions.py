"""What each request decides, as pure functions: an error to answer at once, or the next metadata.

They read the id's metadata and whether a write is in flight, and change nothing; the coordinator
writes the metadata they return. The checks and their order are Kafka's (TransactionCoordinator).
EndTxn has two tables: transactions V1 (`decide_end`) and V2 (`decide_end_v2`, EndTxn v5+), where
every end bumps the epoch, so a retry is told apart from the next transaction by its epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions.metadata import (
    MAX_PRODUCER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TRANSACTION_V2,
    TransactionMetadata,
    is_epoch_exhausted,
    prepare_add_partitions,
    prepare_end,
    prepare_end_v2,
    prepare_fence_and_abort,
    prepare_increment_epoch,
    prepare_rotation,
)
from kafkito.broker.transactions.requests import (
    AddPartitionsRequest,
    EndTxnRequest,
    EndTxnResult,
    InitProducerIdRequest,
)
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode


@dataclass(slots=True, frozen=True)
class InitDecision:
    """InitProducerId's next metadata. `fence`: it aborts the open transaction first (the client gets
    CONCURRENT_TRANSACTIONS and retries). `last_epoch`: the in-memory previous epoch to keep."""

    metadata: TransactionMetadata
    fence: bool = False
    last_epoch: int = NO_PRODUCER_EPOCH


def _expected_is_valid(meta: TransactionMetadata, expected: tuple[int, int]) -> bool:
    """KIP-360: a producer naming its id and epoch may re-initialise when the id is brand new, when
    it holds the current producer id, or when it holds the previous one at an exhausted epoch (a
    retry after a rotation whose answer it never got)."""
    producer_id, epoch = expected
    return (
        meta.producer_epoch == NO_PRODUCER_EPOCH
        or producer_id == meta.producer_id
        or (producer_id == meta.previous_producer_id and is_epoch_exhausted(epoch))
    )


def decide_init(
    meta: TransactionMetadata,
    request: InitProducerIdRequest,
    last_epoch: int,
    allocate: Callable[[], int],
    now_ms: int,
) -> InitDecision | ErrorCode:
    expected = request.expected
    if expected is not None and not _expected_is_valid(meta, expected):
        return ErrorCode.PRODUCER_FENCED
    if meta.state.is_prepare:
        return ErrorCode.CONCURRENT_TRANSACTIONS
    if meta.state is TxnState.ONGOING:
        # The epoch of this fence is never returned: the client retries and bumps it once more.
        return InitDecision(prepare_fence_and_abort(meta, now_ms), fence=True)
    timeout = request.transaction_timeout_ms
    expected_epoch = None if expected is None else expected[1]
    if meta.is_epoch_exhausted and expected_epoch in (None, meta.producer_epoch):
        rotated = prepare_rotation(meta, allocate(), timeout, now_ms)
        return InitDecision(
            rotated, last_epoch=NO_PRODUCER_EPOCH if expected is None else meta.producer_epoch
        )
    if (
        expected_epoch is None
        or meta.producer_epoch == NO_PRODUCER_EPOCH
        or expected_epoch == meta.producer_epoch
    ):
        bumped = prepare_increment_epoch(meta, timeout, now_ms)
        return InitDecision(bumped, last_epoch=NO_PRODUCER_EPOCH if expected is None else meta.producer_epoch)
    if expected_epoch == last_epoch:
        # A retry of the bump this producer already got: answer with the current epoch again.
        same = prepare_increment_epoch(meta, timeout, now_ms, bump=False)
        return InitDecision(same, last_epoch=last_epoch)
    return ErrorCode.PRODUCER_FENCED


def _check_producer(
    meta: TransactionMetadata | None, producer_id: int, epoch: int, pending: bool
) -> ErrorCode | None:
    """The checks every request of an open producer passes first, in Kafka's order."""
    if meta is None or meta.producer_id != producer_id:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if meta.producer_epoch != epoch:
        return ErrorCode.PRODUCER_FENCED
    if pending:
        return ErrorCode.CONCURRENT_TRANSACTIONS
    return None


def decide_add_partitions(
    meta: TransactionMetadata | None, request: AddPartitionsRequest, pending: bool, now_ms: int
) -> TransactionMetadata | ErrorCode:
    """The next metadata, or the error for every partition (NONE: nothing to write).

    A V2 add (Produce v12, TxnOffsetCommit v5) looks for a transaction still ending first: its
    producer may already hold the next epoch or producer id, which the metadata reaches only once the
    markers are written, and must be told to retry rather than that it is fenced (as Kafka does).
    """
    v2 = request.transaction_version >= TRANSACTION_V2
    if v2 and meta is not None and (pending or meta.state.is_prepare):
        return ErrorCode.CONCURRENT_TRANSACTIONS
    error = _check_producer(meta, request.producer_id, request.producer_epoch, pending)
    if error is not None:
        return error
    assert meta is not None
    if meta.state.is_prepare:
        return ErrorCode.CONCURRENT_TRANSACTIONS
    if meta.state is TxnState.ONGOING and request.partitions <= meta.partitions:
        return ErrorCode.NONE
    return prepare_add_partitions(meta, request.partitions, now_ms, request.transaction_version)


def verify_partitions(
    meta: TransactionMetadata | None,
    producer_id: int,
    epoch: int,
    partitions: frozenset[TopicPartition],
    pending: bool,
) -> dict[TopicPartition, ErrorCode]:
    """AddPartitionsToTxn v4+ with `verify_only`: is each partition in the open transaction?

    Writes nothing. A partition missing from it gets TRANSACTION_ABORTABLE (`errors.for_version`
    turns it into INVALID_TXN_STATE for clients that predate it).
    """
    error = _check_producer(meta, producer_id, epoch, pending)
    if error is None and meta is not None and meta.state.is_prepare:
        error = ErrorCode.CONCURRENT_TRANSACTIONS
    if error is not None:
        return dict.fromkeys(partitions, error)
    assert meta is not None
    inside = meta.partitions if meta.state is TxnState.ONGOING else frozenset()
    return {tp: ErrorCode.NONE if tp in inside else ErrorCode.TRANSACTION_ABORTABLE for tp in partitions}


_END_ANSWERS: dict[tuple[TxnState, bool], ErrorCode] = {
    (TxnState.COMPLETE_COMMIT, True): ErrorCode.NONE,  # a retry of a commit that completed
    (TxnState.COMPLETE_ABORT, False): ErrorCode.NONE,
    (TxnState.PREPARE_COMMIT, True): ErrorCode.CONCURRENT_TRANSACTIONS,  # markers on their way
    (TxnState.PREPARE_ABORT, False): ErrorCode.CONCURRENT_TRANSACTIONS,
}


def decide_end(
    meta: TransactionMetadata | None, request: EndTxnRequest, pending: bool, now_ms: int
) -> TransactionMetadata | ErrorCode:
    """EndTxn from the client: the Prepare* metadata, or the answer (NONE for a retried success)."""
    error = _check_producer(meta, request.producer_id, request.producer_epoch, pending)
    if error is not None:
        return error
    assert meta is not None
    if meta.state is TxnState.ONGOING:
        return prepare_end(meta, request.commit, now_ms)
    return _END_ANSWERS.get((meta.state, request.commit), ErrorCode.INVALID_TXN_STATE)


def _valid_epoch_v2(
    meta: TransactionMetadata, epoch: int, retry_on_bump: bool, retry_on_overflow: bool
) -> bool:
    """Kafka's V2 epoch rule: the current epoch opens and ends transactions; a Prepare*/Complete*
    state also accepts the epoch just before it (a retried EndTxn), or the last epoch of the previous
    producer id after a rotation."""
    state = meta.state
    if state.is_prepare:
        return retry_on_bump
    if state.is_complete:
        return retry_on_bump or retry_on_overflow or epoch == meta.producer_epoch
    return epoch == meta.producer_epoch


def decide_end_v2(
    meta: TransactionMetadata | None,
    request: EndTxnRequest,
    pending: bool,
    allocate: Callable[[], int],
    now_ms: int,
) -> TransactionMetadata | EndTxnResult:
    """EndTxn v5+: the Prepare* metadata (epoch bumped), or the answer at once.

    A retry of an end that already completed answers NONE with the producer id and epoch to go on
    with. An abort with nothing open (Empty, or after a completed transaction) still bumps the epoch.
    """
    if meta is None:
        return EndTxnResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    pid, epoch = request.producer_id, request.producer_epoch
    retry_on_overflow = (
        meta.previous_producer_id == pid and epoch == MAX_PRODUCER_EPOCH - 1 and meta.producer_epoch == 0
    )
    retry_on_bump = meta.producer_epoch == epoch + 1
    if meta.producer_id != pid and not retry_on_overflow:
        return EndTxnResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if not _valid_epoch_v2(meta, epoch, retry_on_bump, retry_on_overflow):
        return EndTxnResult(ErrorCode.PRODUCER_FENCED)
    if pending:
        return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS)
    commit, state = request.commit, meta.state
    retry = retry_on_bump or retry_on_overflow
    if _starts_end_v2(state, commit, retry):
        next_id = allocate() if meta.is_epoch_exhausted else NO_PRODUCER_ID
        return prepare_end_v2(meta, commit, next_id, now_ms)
    if retry and (state, commit) in _RETRIED_V2:
        return EndTxnResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
    if state.is_prepare and commit == (state is TxnState.PREPARE_COMMIT):
        return EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS)
    return EndTxnResult(ErrorCode.INVALID_TXN_STATE)


def _starts_end_v2(state: TxnState, commit: bool, retry: bool) -> bool:
    """An open transaction ends; an abort (not a retry) may also come with nothing open."""
    if state is TxnState.ONGOING:
        return True
    return not commit and not retry and state in _ABORTABLE_IDLE


_ABORTABLE_IDLE = frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT})
# A retried EndTxn whose end is complete: answered NONE.
_RETRIED_V2 = frozenset({(TxnState.COMPLETE_COMMIT, True), (TxnState.COMPLETE_ABORT, False)})
