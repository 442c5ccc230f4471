"""Transactional offsets: TxnOffsetCommit writes them pending, a transaction's marker ends them.

As Kafka's commitTransactionalOffset: the group is found (created as an empty classic group for a
commit from outside any group, generation -1), the member is checked when named (v3+), oversized
metadata is refused per partition, and the rest is written as one transactional batch of the
producer to the group's `__consumer_offsets` partition. Once written, the offsets are pending in
the producer's transaction (`txn_offsets.py`) until `complete` writes its COMMIT or ABORT marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.errors import offset_write_error
from kafkito.broker.coordinator.offset_manager import commit_target
from kafkito.broker.coordinator.records import (
    AppendCallback,
    CoordinatorResult,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.requests import TxnOffsetCommitRequest
from kafkito.broker.coordinator.results import CommitCallback, TopicPartition
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class TransactionalCommits:
    """TxnOffsetCommit and transaction markers on `__consumer_offsets`."""

    __slots__ = ("rt",)

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def commit(self, request: TxnOffsetCommitRequest, callback: CommitCallback) -> None:
        send = self.rt.outbox.send
        group = commit_target(self.rt, request)
        if isinstance(group, ErrorCode):
            send(callback, dict.fromkeys(request.offsets, group))
            return
        limit = self.rt.config.offset_metadata_max_bytes
        now = self.rt.clock.now_ms()
        records = [
            TxnOffsetCommitRecord(
                group.group_id,
                tp,
                o if o.commit_timestamp_ms >= 0 else o._replace(commit_timestamp_ms=now),
                request.producer_id,
                request.producer_epoch,
            )
            for tp, o in request.offsets.items()
            if o.metadata is None or len(o.metadata) <= limit
        ]
        if not records:
            send(callback, dict.fromkeys(request.offsets, ErrorCode.OFFSET_METADATA_TOO_LARGE))
            return
        respond = partial(self._written, records, list(request.offsets), callback)
        self.rt.write(CoordinatorResult(group.group_id, records, respond))

    def _written(
        self,
        records: Sequence[TxnOffsetCommitRecord],
        asked: Sequence[TopicPartition],
        callback: CommitCallback,
        append_error: ErrorCode,
    ) -> None:
        if append_error is ErrorCode.NONE:
            replay = self.rt.replay
            for record in records:
                replay(record)
            error = ErrorCode.NONE
        else:
            error = offset_write_error(append_error)
        written = {r.partition for r in records}
        self.rt.outbox.send(
            callback, {tp: error if tp in written else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in asked}
        )

    def complete(
        self,
        offsets_partition: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        done: AppendCallback,
    ) -> None:
        """Write the marker to the partition, then replay it; `done` gets the append's error."""
        if self.rt.sink.is_partition_loading(offsets_partition):
            # Its transactional records are not all replayed yet: the marker would miss some. The
            # transaction coordinator retries, as Kafka's marker channel does.
            self.rt.outbox.send(done, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            return
        marker = TransactionMarker(offsets_partition, producer_id, producer_epoch, commit)
        self.rt.sink.append_marker(marker, self.rt.outbox.guard(partial(self._marker_written, marker, done)))

    def _marker_written(
        self, marker: TransactionMarker, done: AppendCallback, append_error: ErrorCode
    ) -> None:
        if append_error is ErrorCode.NONE:
            self.rt.replay(marker)
        else:
            log.warning(
                "group.txn_marker_failed",
                partition=marker.offsets_partition,
                producer_id=marker.producer_id,
                commit=marker.commit,
                error=append_error.name,
            )
        self.rt.outbox.send(done, append_error)
