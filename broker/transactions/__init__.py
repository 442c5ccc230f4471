"""The transaction coordinator (sans-io): `__transaction_state` records, states, markers, timeouts.

Modules: `state` (the state table), `metadata` (an id's durable metadata, its records and pure
transitions), `codec` (Kafka's key/value formats, the partition of an id), `decisions` (what each
request decides), `coordinator` (the object handlers will call), `runtime` (shared state, writes,
replay), `markers` (COMMIT/ABORT markers, then Complete*), `expiry` (timeouts, id expiration),
`queries` (Describe/ListTransactions), `ports` (sink, marker writer, producer ids), `errors`.

The broker's shell: `log_sink` (the `TxnRecordSink` over `__transaction_state`, created on first
write), `manager` (reloading that topic on start, in chunks), `marker_writer` (WriteTxnMarkers
inside the broker: data partitions and `__consumer_offsets`). The API handlers map errors per version
with `errors.for_version`.
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
