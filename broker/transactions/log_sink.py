"""The coordinator's `TxnRecordSink` on the log: records encoded and appended to `__transaction_state`.

The topic is created on the first write, as Kafka creates it on first use (compacted, with
`transaction.state.log.num.partitions` partitions). Timestamps go out in wall-clock milliseconds;
values are written at least in `value_version` (v1, flexible, on a cluster at transaction.version 1+).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.errors import LogError
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.transactions.codec import (
    TRANSACTION_STATE_TOPIC,
    RecordFormatError,
    encode_record,
    partition_for,
)
from kafkito.broker.transactions.config import TRANSACTION_STATE_TOPIC_CONFIGS
from kafkito.broker.transactions.metadata import TxnLogRecord
from kafkito.broker.transactions.ports import AppendCallback
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.transactions")

_PARTITION_CACHE_SIZE = 100_000


def ensure_state_topic(logs: LogManager, num_partitions: int, segment_bytes: int) -> int:
    """Create `__transaction_state` if missing; its partition count (which never changes)."""
    info = logs.topic(TRANSACTION_STATE_TOPIC)
    if info is None:
        configs = dict(TRANSACTION_STATE_TOPIC_CONFIGS, **{"segment.bytes": str(segment_bytes)})
        info = logs.create_topic(TRANSACTION_STATE_TOPIC, num_partitions, 1, configs)
        log.info("txn.topic_created", partitions=info.partitions)
    elif info.partitions != num_partitions:
        log.warning("txn.partition_count_kept", configured=num_partitions, existing=info.partitions)
    return info.partitions


class TxnLogSink:
    """Appends each write as one batch to the id's partition; answers once the log has it.

    `loading` holds the partitions being replayed: their ids are not served until they are loaded.
    """

    def __init__(
        self,
        logs: LogManager,
        num_partitions: int,
        segment_bytes: int,
        clock: Clock,
        value_version: int = 0,
    ) -> None:
        self._logs = logs
        self._value_version = value_version  # the lowest value version written
        self.num_partitions = num_partitions
        self._segment_bytes = segment_bytes
        self.clock = clock  # the broker's: epoch milliseconds, as the records carry them
        self.loading: set[int] = set()
        self.appends = 0
        self._cache: dict[str, int] = {}

    @property
    def topic_exists(self) -> bool:
        return self._logs.topic(TRANSACTION_STATE_TOPIC) is not None

    def ensure_topic(self) -> None:
        self.num_partitions = ensure_state_topic(self._logs, self.num_partitions, self._segment_bytes)

    def partition_for(self, transactional_id: str) -> int:
        partition = self._cache.get(transactional_id)
        if partition is None:
            if len(self._cache) >= _PARTITION_CACHE_SIZE:
                self._cache.clear()
            partition = self._cache[transactional_id] = partition_for(transactional_id, self.num_partitions)
        return partition

    # -- TxnRecordSink ----------------------------------------------------------------------------

    def is_loading(self, transactional_id: str) -> bool:
        return bool(self.loading) and self.partition_for(transactional_id) in self.loading

    def is_any_loading(self) -> bool:
        return bool(self.loading)

    def append(self, transactional_id: str, records: Sequence[TxnLogRecord], done: AppendCallback) -> None:
        try:
            encoded = [encode_record(r, self._value_version) for r in records]
        except (RecordFormatError, ValueError) as exc:
            log.error("txn.record_unencodable", transactional_id=transactional_id, error=str(exc))
            done(ErrorCode.UNKNOWN_SERVER_ERROR)
            return
        done(self._append(transactional_id, encoded))

    def _append(self, transactional_id: str, records: Sequence[tuple[bytes, bytes | None]]) -> ErrorCode:
        try:
            if not self.topic_exists:
                self.ensure_topic()
            partition = self.partition_for(transactional_id)
            plog = self._logs.get_log(TRANSACTION_STATE_TOPIC, partition)
            plog.append(build_batch(records, self.clock.now_ms()))
        except LogError as exc:
            log.warning("txn.append_failed", transactional_id=transactional_id, error=exc.code.name)
            return exc.code
        except OSError as exc:
            log.error("txn.append_io_error", transactional_id=transactional_id, error=str(exc))
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.appends += 1
        return ErrorCode.NONE
