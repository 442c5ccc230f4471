"""A transactional id's durable metadata, the records that carry it, and its pure transitions.

`TransactionMetadata` holds exactly what a `__transaction_state` value holds, so a coordinator
rebuilt from its records equals the one that wrote them. Each `prepare_*` function returns the next
metadata (Kafka's "transit metadata") without changing anything: the coordinator writes it as a
record, and `replay` makes it the state once the append succeeded.

Transactions V2 (KIP-890 part 2, `client_transaction_version` 2) bump the epoch at every transaction
end: `prepare_end_v2` writes the decision under epoch + 1 (the markers carry it), and when that
leaves no epoch to spare it names the next producer id, which `prepare_complete` then switches to
(at epoch 0, keeping the old id as the previous one, so a retried EndTxn is still recognised).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions.state import TxnState, check_transition

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_PRODUCER_EPOCH = 32767  # Short.MAX_VALUE
NO_TIMESTAMP = -1
TRANSACTION_V2 = 2  # the client transaction version that bumps the epoch per transaction


def is_epoch_exhausted(epoch: int) -> bool:
    """No room left to bump the epoch and still fence once more (Kafka keeps one value spare)."""
    return epoch >= MAX_PRODUCER_EPOCH - 1


@dataclass(slots=True, frozen=True)
class TransactionMetadata:
    """One transactional id, as its latest record states it (timestamps on the coordinator's clock)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition] = frozenset()
    last_update_ms: int = NO_TIMESTAMP
    start_ms: int = NO_TIMESTAMP
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    client_transaction_version: int = 0

    @property
    def is_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)


class TransactionRecord(NamedTuple):
    """The value record of a transactional id: its whole metadata."""

    metadata: TransactionMetadata

    @property
    def transactional_id(self) -> str:
        return self.metadata.transactional_id


class TransactionTombstone(NamedTuple):
    """The id expired: its key with a null value (compaction then drops it)."""

    transactional_id: str


TxnLogRecord = TransactionRecord | TransactionTombstone


def new_metadata(
    transactional_id: str, producer_id: int, timeout_ms: int, now_ms: int
) -> TransactionMetadata:
    """An id seen for the first time, before its first epoch: never written as it is."""
    return TransactionMetadata(
        transactional_id, producer_id, NO_PRODUCER_EPOCH, timeout_ms, TxnState.EMPTY, last_update_ms=now_ms
    )


def _to(meta: TransactionMetadata, state: TxnState, **changes: Any) -> TransactionMetadata:
    check_transition(meta.state, state)
    return replace(meta, state=state, **changes)


def prepare_increment_epoch(
    meta: TransactionMetadata, timeout_ms: int, now_ms: int, *, bump: bool = True
) -> TransactionMetadata:
    """InitProducerId on an idle id: the next epoch (0 for a new id), no transaction open.

    `bump=False` keeps the epoch: the answer to a retry of a bump the producer already received.
    """
    if bump and meta.is_epoch_exhausted:
        raise ValueError("epoch exhausted: rotate the producer id instead")
    return _to(
        meta,
        TxnState.EMPTY,
        producer_epoch=meta.producer_epoch + 1 if bump else meta.producer_epoch,
        timeout_ms=timeout_ms,
        partitions=frozenset(),
        start_ms=NO_TIMESTAMP,
        last_update_ms=now_ms,
    )


def prepare_rotation(
    meta: TransactionMetadata, new_producer_id: int, timeout_ms: int, now_ms: int
) -> TransactionMetadata:
    """The epoch ran out: a new producer id at epoch 0; the old id is kept for a retried request."""
    return _to(
        meta,
        TxnState.EMPTY,
        producer_id=new_producer_id,
        previous_producer_id=meta.producer_id,
        producer_epoch=0,
        timeout_ms=timeout_ms,
        partitions=frozenset(),
        start_ms=NO_TIMESTAMP,
        last_update_ms=now_ms,
    )


def prepare_add_partitions(
    meta: TransactionMetadata,
    partitions: frozenset[TopicPartition],
    now_ms: int,
    transaction_version: int | None = None,
) -> TransactionMetadata:
    """Add partitions; a transaction that was not open starts now. `transaction_version`, when given,
    is the client's (0 for AddPartitionsToTxn up to v3, 2 for a partition a Produce v12 adds)."""
    start = meta.start_ms if meta.state is TxnState.ONGOING else now_ms
    version = meta.client_transaction_version if transaction_version is None else transaction_version
    return _to(
        meta,
        TxnState.ONGOING,
        partitions=meta.partitions | partitions,
        start_ms=start,
        last_update_ms=now_ms,
        client_transaction_version=version,
    )


def prepare_end(meta: TransactionMetadata, commit: bool, now_ms: int) -> TransactionMetadata:
    """EndTxn: the decision, which the markers will carry out."""
    state = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
    return _to(meta, state, last_update_ms=now_ms)


def prepare_end_v2(
    meta: TransactionMetadata, commit: bool, next_producer_id: int, now_ms: int
) -> TransactionMetadata:
    """EndTxn v5+ (transactions V2): the decision under epoch + 1, which the markers carry.

    `next_producer_id` is the id to continue with once the epoch runs out (NO_PRODUCER_ID while it
    does not). An abort may come with no transaction open (Empty, Complete*): its start is now.
    """
    state = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
    start = meta.start_ms if meta.state is TxnState.ONGOING else now_ms
    return _to(
        meta,
        state,
        producer_epoch=meta.producer_epoch + 1,
        next_producer_id=next_producer_id,
        client_transaction_version=TRANSACTION_V2,
        start_ms=start,
        last_update_ms=now_ms,
    )


def next_producer(meta: TransactionMetadata) -> tuple[int, int]:
    """The producer id and epoch a prepared V2 transaction hands its producer for what follows."""
    if meta.next_producer_id != NO_PRODUCER_ID:
        return meta.next_producer_id, 0
    return meta.producer_id, meta.producer_epoch


def prepare_fence_and_abort(
    meta: TransactionMetadata, now_ms: int, next_producer_id: int = NO_PRODUCER_ID
) -> TransactionMetadata:
    """Fence the current producer instance (epoch + 1) and abort its transaction under the new epoch.

    Kafka passes through the pending state PrepareEpochFence; the record written is the PrepareAbort.
    A V2 transaction fenced at its last usable epoch names the producer id to go on with
    (`next_producer_id`), as its own end would (KAFKA-20090): otherwise a retried EndTxn could hand
    its producer the maximum epoch, which no later fence could bump.
    """
    if meta.producer_epoch >= MAX_PRODUCER_EPOCH:
        raise ValueError("cannot fence a producer at the maximum epoch")
    fencing = _to(meta, TxnState.PREPARE_EPOCH_FENCE, producer_epoch=meta.producer_epoch + 1)
    return _to(fencing, TxnState.PREPARE_ABORT, last_update_ms=now_ms, next_producer_id=next_producer_id)


def prepare_complete(meta: TransactionMetadata, now_ms: int) -> TransactionMetadata:
    """Every marker is written: the transaction is over and its partitions are cleared.

    A V2 transaction that ran out of epochs moves on to its next producer id, at epoch 0.
    """
    state = TxnState.COMPLETE_COMMIT if meta.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
    if meta.client_transaction_version >= TRANSACTION_V2 and meta.next_producer_id != NO_PRODUCER_ID:
        return _to(
            meta,
            state,
            producer_id=meta.next_producer_id,
            previous_producer_id=meta.producer_id,
            next_producer_id=NO_PRODUCER_ID,
            producer_epoch=0,
            partitions=frozenset(),
            last_update_ms=now_ms,
        )
    return _to(meta, state, partitions=frozenset(), last_update_ms=now_ms)


def prepare_dead(meta: TransactionMetadata) -> TransactionMetadata:
    """The id expires (checks the transition; what is written is a tombstone)."""
    return _to(meta, TxnState.DEAD)
