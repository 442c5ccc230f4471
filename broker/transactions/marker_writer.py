"""The broker's `MarkerWriter`: WriteTxnMarkers without a network hop.

A data partition gets its COMMIT/ABORT control batch from `PartitionLog.append_marker`; a
`__consumer_offsets` partition goes to the group coordinator's `complete_transaction`, which writes
the marker there and then commits or drops the producer's pending transactional offsets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import structlog

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.log.errors import LogError
from kafkito.broker.transactions.ports import MarkerRequest, MarkersCallback, TransactionResult
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.transactions")

OFFSETS_TOPIC = "__consumer_offsets"


class MarkerLog(Protocol):
    def append_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int = 0
    ) -> int: ...


class OffsetsMarkers(Protocol):
    """The group coordinator's side of a transaction's end (`GroupCoordinator.complete_transaction`)."""

    def complete_transaction(
        self,
        offsets_partition: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        done: Callable[[ErrorCode], None],
    ) -> None: ...


class BrokerMarkerWriter:
    """Writes the markers of one transaction and answers with an error per partition."""

    __slots__ = ("_get_log", "_groups")

    def __init__(self, get_log: Callable[[str, int], MarkerLog], groups: OffsetsMarkers) -> None:
        self._get_log = get_log
        self._groups = groups

    def write_markers(self, request: MarkerRequest, done: MarkersCallback) -> None:
        commit = request.result is TransactionResult.COMMIT
        errors: dict[TopicPartition, ErrorCode] = {}
        offsets: list[TopicPartition] = []
        for tp in sorted(request.partitions):
            if tp.topic == OFFSETS_TOPIC:
                offsets.append(tp)
            else:
                errors[tp] = self._write_data_marker(tp, request, commit)
        if not offsets:
            done(errors)
            return
        waiting = set(offsets)

        def one(tp: TopicPartition) -> Callable[[ErrorCode], None]:
            def answered(error: ErrorCode) -> None:
                if tp not in waiting:
                    return  # answered twice: the first answer stands
                waiting.discard(tp)
                errors[tp] = error
                if not waiting:
                    done(errors)

            return answered

        for tp in offsets:
            try:
                self._groups.complete_transaction(
                    tp.partition, request.producer_id, request.producer_epoch, commit, one(tp)
                )
            except Exception:
                log.exception("txn.offsets_marker_failed", partition=tp.partition)
                one(tp)(ErrorCode.UNKNOWN_SERVER_ERROR)

    def _write_data_marker(self, tp: TopicPartition, request: MarkerRequest, commit: bool) -> ErrorCode:
        try:
            plog = self._get_log(tp.topic, tp.partition)
            plog.append_marker(request.producer_id, request.producer_epoch, commit, request.coordinator_epoch)
        except LogError as exc:
            if exc.code is not ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                log.warning("txn.marker_failed", topic=tp.topic, partition=tp.partition, error=exc.code.name)
            return exc.code
        except OSError as exc:
            log.error("txn.marker_io_error", topic=tp.topic, partition=tp.partition, error=str(exc))
            return ErrorCode.KAFKA_STORAGE_ERROR
        return ErrorCode.NONE
