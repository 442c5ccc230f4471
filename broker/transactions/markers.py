"""Carrying out a decision: COMMIT/ABORT markers to every partition, then the Complete* record.

Once a PrepareCommit/PrepareAbort record is written (or found on load), the coordinator asks the
`MarkerWriter` for a marker on each partition of the transaction. Partitions whose marker failed
are asked again after `marker_retry_backoff_ms`; a partition that no longer exists needs none. When
every marker is in, the CompleteCommit/CompleteAbort record is written (again and again until it
is), and only that record ends the transaction: no transaction completes without its markers.
"""

from __future__ import annotations

from collections.abc import Mapping

import structlog

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions.metadata import TransactionMetadata, prepare_complete
from kafkito.broker.transactions.ports import MarkerRequest, MarkerWriter, TransactionResult
from kafkito.broker.transactions.runtime import TxnRuntime
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.transactions")

_WRITTEN = frozenset({ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})


class Markers:
    """Sends the markers of prepared transactions and completes them."""

    __slots__ = ("_rt", "_writer")

    def __init__(self, rt: TxnRuntime, writer: MarkerWriter) -> None:
        self._rt = rt
        self._writer = writer

    def send(self, meta: TransactionMetadata) -> None:
        """Start carrying out `meta`'s decision (it is in PrepareCommit or PrepareAbort)."""
        self._send(meta, meta.partitions)

    def _is_current(self, meta: TransactionMetadata) -> bool:
        current = self._rt.transactions.get(meta.transactional_id)
        return (
            self._rt.active
            and current is not None
            and current.state is meta.state
            and current.producer_id == meta.producer_id
            and current.producer_epoch == meta.producer_epoch
        )

    def _send(self, meta: TransactionMetadata, partitions: frozenset[TopicPartition]) -> None:
        if not self._is_current(meta):
            return
        if not partitions:
            self._complete(meta)
            return
        result = (
            TransactionResult.COMMIT if meta.state is TxnState.PREPARE_COMMIT else TransactionResult.ABORT
        )
        request = MarkerRequest(
            meta.transactional_id, meta.producer_id, meta.producer_epoch, result, partitions
        )

        def written(errors: Mapping[TopicPartition, ErrorCode]) -> None:
            self._on_written(meta, partitions, errors)

        self._writer.write_markers(request, self._rt.outbox.guard(written))

    def _on_written(
        self,
        meta: TransactionMetadata,
        partitions: frozenset[TopicPartition],
        errors: Mapping[TopicPartition, ErrorCode],
    ) -> None:
        remaining = frozenset(
            tp for tp in partitions if errors.get(tp, ErrorCode.UNKNOWN_SERVER_ERROR) not in _WRITTEN
        )
        if not remaining:
            self._complete(meta)
            return
        log.info(
            "txn.markers_retry",
            transactional_id=meta.transactional_id,
            partitions=len(remaining),
            errors=sorted({errors.get(tp, ErrorCode.UNKNOWN_SERVER_ERROR).name for tp in remaining}),
        )
        self._rt.schedule(self._rt.config.marker_retry_backoff_ms, lambda: self._send(meta, remaining))

    def _complete(self, meta: TransactionMetadata) -> None:
        rt = self._rt
        if not self._is_current(meta) or meta.transactional_id in rt.pending:
            return
        current = rt.transactions[meta.transactional_id]
        completed = prepare_complete(current, rt.now_ms())

        def done(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                rt.schedule(rt.config.marker_retry_backoff_ms, lambda: self._complete(meta))

        rt.write_metadata(completed, done)
