"""What the transaction coordinator asks of the broker: a record sink, a marker writer, producer ids.

All three are sans-io ports: a call that answers through a callback, at once or later from the
event loop. The in-memory sink here serves tests and tools (like `coordinator.sink`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.coordinator.sink import InMemoryAppends
from kafkito.broker.transactions.metadata import TxnLogRecord
from kafkito.protocol.errors import ErrorCode

AppendCallback = Callable[[ErrorCode], None]
MarkersCallback = Callable[[Mapping[TopicPartition, ErrorCode]], None]


class TransactionResult(Enum):
    """What a control marker says (Kafka's `TransactionResult`; the control record type is its value)."""

    ABORT = 0
    COMMIT = 1


@dataclass(slots=True, frozen=True)
class MarkerRequest:
    """Write one marker per partition: WriteTxnMarkers' entry for one transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    result: TransactionResult
    partitions: frozenset[TopicPartition]
    coordinator_epoch: int = 0


class MarkerWriter(Protocol):
    """Appends COMMIT/ABORT control batches to data partitions (WriteTxnMarkers, without a network hop).

    `done` gets an error per partition asked for (NONE: written). UNKNOWN_TOPIC_OR_PARTITION means the
    partition is gone and needs no marker; any other error is tried again by the coordinator.
    """

    def write_markers(self, request: MarkerRequest, done: MarkersCallback) -> None: ...


class ProducerIdAllocator(Protocol):
    """Hands out unique producer ids (the broker's `ProducerIdManager`)."""

    def next_id(self) -> int: ...


class TxnRecordSink(Protocol):
    """Appends a transactional id's records to its `__transaction_state` partition."""

    def is_loading(self, transactional_id: str) -> bool:
        """True while the partition holding this id is being loaded."""
        ...

    def is_any_loading(self) -> bool:
        """True while any partition is being loaded (ListTransactions reports it)."""
        ...

    def append(self, transactional_id: str, records: Sequence[TxnLogRecord], done: AppendCallback) -> None:
        """Write `records` in one append, then call `done` with the append error (NONE on success)."""
        ...

    def ensure_topic(self) -> None:
        """Create `__transaction_state` if it is not there yet."""
        ...


class InMemoryTxnSink(InMemoryAppends[TxnLogRecord]):
    """The transaction coordinator's records in memory (see `InMemoryAppends`)."""

    def __init__(self, *, defer_writes: bool = False) -> None:
        super().__init__(defer_writes=defer_writes)
        self.loading: set[str] = set()

    def is_loading(self, transactional_id: str) -> bool:
        return transactional_id in self.loading

    def is_any_loading(self) -> bool:
        return bool(self.loading)

    def append(self, transactional_id: str, records: Sequence[TxnLogRecord], done: AppendCallback) -> None:
        self._answer(records, done)

    def ensure_topic(self) -> None:
        """Nothing to create: the records stay in memory."""
