"""The transaction coordinator (sans-io): `__transaction_state` records, states, markers, timeouts.

Not wired into the broker yet: the API handlers, the `__transaction_state` log shell, the marker
writer (control batches) and the read_committed log side come next.
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
