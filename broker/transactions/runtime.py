"""What the transaction coordinator's parts share: the transactions, pending writes, the sink.

`replay` is the only way a transaction's durable state changes, at load and at run time: a write
marks the id pending (other requests get CONCURRENT_TRANSACTIONS), appends its record, and replays
it once the append succeeded; only then does the answer go out (through the `Outbox`).
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from kafkito.broker.coordinator.outbox import Outbox
from kafkito.broker.transactions.config import TransactionConfig
from kafkito.broker.transactions.errors import append_error
from kafkito.broker.transactions.metadata import (
    TransactionMetadata,
    TransactionRecord,
    TransactionTombstone,
    TxnLogRecord,
)
from kafkito.broker.transactions.ports import TxnRecordSink
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Timer, TimerTask

log = structlog.get_logger("kafkito.transactions")


class TxnRuntime:
    """The transactions (as their records say), the ids with a write in flight, and the plumbing."""

    __slots__ = (
        "active",
        "clock",
        "config",
        "last_epochs",
        "outbox",
        "pending",
        "sink",
        "timer",
        "transactions",
    )

    def __init__(self, config: TransactionConfig, clock: Clock, timer: Timer, sink: TxnRecordSink) -> None:
        self.config = config
        self.clock = clock
        self.timer = timer
        self.sink = sink
        self.outbox = Outbox()
        self.transactions: dict[str, TransactionMetadata] = {}
        # Writes in flight: the state each id is moving to (Kafka's pendingState).
        self.pending: dict[str, TxnState] = {}
        # Kafka's lastProducerEpoch: the epoch before the last bump, kept in memory only (it lets a
        # retried InitProducerId get the epoch it already received). A restart forgets it, as in Kafka.
        self.last_epochs: dict[str, int] = {}
        self.active = True

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def replay(self, record: TxnLogRecord) -> None:
        """Apply a record of `__transaction_state` (load and run time alike)."""
        if isinstance(record, TransactionTombstone):
            self.transactions.pop(record.transactional_id, None)
            self.last_epochs.pop(record.transactional_id, None)
        else:
            self.transactions[record.transactional_id] = record.metadata

    def write(self, record: TxnLogRecord, pending: TxnState, then: Callable[[ErrorCode], None]) -> None:
        """Append `record`, replay it once written, then call `then` with the client-facing error."""
        txn_id = record.transactional_id
        self.pending[txn_id] = pending

        def done(error: ErrorCode) -> None:
            if self.pending.get(txn_id) is pending:
                del self.pending[txn_id]
            if not self.active:
                then(ErrorCode.NOT_COORDINATOR)
                return
            if error is ErrorCode.NONE:
                self.replay(record)
                self._log_write(record)
            else:
                log.warning("txn.append_failed", transactional_id=txn_id, error=error.name)
            then(append_error(error))

        self.sink.append(txn_id, (record,), self.outbox.guard(done))

    def write_metadata(
        self, meta: TransactionMetadata, then: Callable[[ErrorCode], None], pending: TxnState | None = None
    ) -> None:
        self.write(TransactionRecord(meta), meta.state if pending is None else pending, then)

    def schedule(self, delay_ms: int, callback: Callable[[], None]) -> TimerTask:
        """A timer callback that runs as an entry of the outbox, and not at all after shutdown."""

        def fire() -> None:
            if not self.active:
                return
            self.outbox.enter()
            try:
                callback()
            finally:
                self.outbox.leave()

        return self.timer.schedule(delay_ms, fire)

    @staticmethod
    def _log_write(record: TxnLogRecord) -> None:
        if isinstance(record, TransactionTombstone):
            log.info("txn.expired", transactional_id=record.transactional_id)
            return
        meta = record.metadata
        log.debug(
            "txn.transition",
            transactional_id=meta.transactional_id,
            state=meta.state.value,
            producer_id=meta.producer_id,
            producer_epoch=meta.producer_epoch,
            partitions=len(meta.partitions),
        )
