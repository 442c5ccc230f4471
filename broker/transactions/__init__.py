"""The transaction coordinator (sans-io): `__transaction_state` records, states, markers, timeouts.

Modules: `state` (the state table), `metadata` (an id's durable metadata, its records and pure
transitions), `codec` (Kafka's key/value formats, the partition of an id), `decisions` (what each
request decides), `coordinator` (the object handlers will call), `runtime` (shared state, writes,
replay), `markers` (COMMIT/ABORT markers, then Complete*), `expiry` (timeouts, id expiration),
`queries` (Describe/ListTransactions), `ports` (sink, marker writer, producer ids), `errors`.

Not wired into the broker yet. The shell still to build: a `TxnRecordSink` over the
`__transaction_state` log (encode with `codec`, wall-clock times via `codec.convert_times`, load by
`coordinator.load`), a `MarkerWriter` appending control batches to the data partitions, and the
API handlers (which map errors per version with `errors.for_version`).
"""

from kafkito.broker.transactions.config import TransactionConfig
from kafkito.broker.transactions.coordinator import TransactionCoordinator
from kafkito.broker.transactions.metadata import TransactionMetadata, TransactionRecord, TransactionTombstone
from kafkito.broker.transactions.ports import (
    InMemoryTxnSink,
    MarkerRequest,
    MarkerWriter,
    ProducerIdAllocator,
    TransactionResult,
    TxnRecordSink,
)
from kafkito.broker.transactions.state import TxnState

__all__ = [
    "InMemoryTxnSink",
    "MarkerRequest",
    "MarkerWriter",
    "ProducerIdAllocator",
    "TransactionConfig",
    "TransactionCoordinator",
    "TransactionMetadata",
    "TransactionRecord",
    "TransactionResult",
    "TransactionTombstone",
    "TxnRecordSink",
    "TxnState",
]
