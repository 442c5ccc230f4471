"""`__transaction_state` for the broker: the coordinator's record sink, and its reload on start.

Every partition of an existing topic counts as loading from construction until it is replayed, so
transactional requests get COORDINATOR_LOAD_IN_PROGRESS until then. Loading runs in chunks handed to
`defer` (the broker passes `loop.call_soon`), as `__consumer_offsets` loads, and ends with the
coordinator's `on_loaded`, which completes the transactions the log left prepared.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import structlog

from kafkito.broker import features
from kafkito.broker.chunked_load import ChunkedLoad, Defer
from kafkito.broker.offsets.loader import read_latest
from kafkito.broker.transactions.codec import (
    TRANSACTION_STATE_TOPIC,
    RecordFormatError,
    decode_record,
)
from kafkito.broker.transactions.config import TransactionConfig
from kafkito.broker.transactions.log_sink import TxnLogSink
from kafkito.broker.transactions.metadata import TxnLogRecord
from kafkito.purgatory import Clock

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager
    from kafkito.broker.transactions.coordinator import TransactionCoordinator

log = structlog.get_logger("kafkito.transactions")

LOAD_CHUNK_RECORDS = 5_000
LOAD_INLINE_BYTES = 1 << 20


class TransactionsManager:
    """Owns `__transaction_state` on behalf of the transaction coordinator."""

    def __init__(
        self,
        logs: LogManager,
        config: TransactionConfig,
        segment_bytes: int,
        clock: Clock,
        *,
        load_chunk_records: int = LOAD_CHUNK_RECORDS,
        load_inline_bytes: int = LOAD_INLINE_BYTES,
    ) -> None:
        self.logs = logs
        self.clock = clock
        self.sink = TxnLogSink(
            logs,
            config.state_log_num_partitions,
            segment_bytes,
            clock,
            features.transaction_log_value_version(),
        )
        if self.sink.topic_exists:
            self.sink.ensure_topic()  # adopts the existing partition count
            self.sink.loading.update(range(self.sink.num_partitions))
        self._chunk = max(load_chunk_records, 1)
        self._inline_bytes = load_inline_bytes
        self._load = ChunkedLoad()

    @property
    def loaded(self) -> bool:
        return not self.sink.loading

    def load(self, coordinator: TransactionCoordinator, defer: Defer) -> None:
        """Replay every partition into `coordinator`, a chunk per `defer`red call (a small log at once)."""
        if not self.sink.loading:
            return
        size = sum(self.logs.get_log(TRANSACTION_STATE_TOPIC, p).size_bytes for p in self.sink.loading)
        if size <= self._inline_bytes:
            self.load_now(coordinator)
            return
        self._load.start(self._load_all(coordinator), defer)

    def load_now(self, coordinator: TransactionCoordinator) -> None:
        for _ in self._load_all(coordinator):
            pass

    def stop_loading(self) -> None:
        """Abandon a load in progress (the broker is stopping)."""
        self._load.stop()

    def _load_all(self, coordinator: TransactionCoordinator) -> Generator[None, None, None]:
        started = self.clock.now_ms()
        failed = 0
        for partition in sorted(self.sink.loading):
            try:
                yield from self._load_partition(partition, coordinator)
            except Exception:
                # Leave it loading: serving its ids without their state could break a transaction.
                failed += 1
                log.exception("txn.partition_load_failed", partition=partition)
        coordinator.on_loaded()
        log.info(
            "txn.loaded",
            transactions=len(coordinator.transactions),
            failed_partitions=failed,
            ms=self.clock.now_ms() - started,
        )

    def _load_partition(
        self, partition: int, coordinator: TransactionCoordinator
    ) -> Generator[None, None, None]:
        plog = self.logs.get_log(TRANSACTION_STATE_TOPIC, partition)
        latest = yield from read_latest(plog, self._chunk)
        for i, (raw_key, raw_value) in enumerate(latest.items(), 1):
            record = self._decode(partition, raw_key, raw_value)
            if record is not None:
                coordinator.replay(record)
            if i % self._chunk == 0:
                yield
        self.sink.loading.discard(partition)
        yield

    def _decode(self, partition: int, raw_key: bytes, raw_value: bytes | None) -> TxnLogRecord | None:
        try:
            record = decode_record(raw_key, raw_value)
        except RecordFormatError as exc:
            log.warning("txn.undecodable_record", partition=partition, key=raw_key.hex(), error=str(exc))
            return None
        return record
