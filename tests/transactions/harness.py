"""A transaction coordinator in virtual time, with a recording marker writer, and sync helpers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions import (
    InMemoryTxnSink,
    MarkerRequest,
    TransactionConfig,
    TransactionCoordinator,
    TransactionMetadata,
)
from kafkito.broker.transactions.ports import MarkersCallback
from kafkito.broker.transactions.requests import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    InitProducerIdResult,
)
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

TXN = "txn-a"
TIMEOUT_MS = 60_000


def tp(topic: str, partition: int = 0) -> TopicPartition:
    return TopicPartition(topic, partition)


class CountingIds:
    """Producer ids from a counter (the broker's ProducerIdManager persists its blocks; same interface)."""

    def __init__(self, start: int = 1000) -> None:
        self.next = start

    def next_id(self) -> int:
        pid = self.next
        self.next += 1
        return pid


@dataclass
class RecordingMarkerWriter:
    """Stands in for the data partitions: records every marker it writes, per partition.

    `defer` parks requests until `complete()`; `failures` maps a partition to the error its next
    attempts get (`failures_left` of them).
    """

    defer: bool = False
    failures: dict[TopicPartition, ErrorCode] = field(default_factory=dict)
    failures_left: int = 0
    requests: list[MarkerRequest] = field(default_factory=list)
    written: list[tuple[MarkerRequest, TopicPartition]] = field(default_factory=list)
    parked: list[tuple[MarkerRequest, MarkersCallback]] = field(default_factory=list)

    def write_markers(self, request: MarkerRequest, done: MarkersCallback) -> None:
        self.requests.append(request)
        if self.defer:
            self.parked.append((request, done))
        else:
            done(self._write(request))

    def _write(self, request: MarkerRequest) -> Mapping[TopicPartition, ErrorCode]:
        errors: dict[TopicPartition, ErrorCode] = {}
        failing = self.failures_left > 0
        for partition in request.partitions:
            error = self.failures.get(partition, ErrorCode.NONE) if failing else ErrorCode.NONE
            if error is ErrorCode.NONE:
                self.written.append((request, partition))
            errors[partition] = error
        if failing:
            self.failures_left -= 1
        return errors

    def complete(self) -> None:
        parked, self.parked = self.parked, []
        for request, done in parked:
            done(self._write(request))

    def marked(self, producer_id: int, epoch: int) -> set[TopicPartition]:
        return {p for r, p in self.written if r.producer_id == producer_id and r.producer_epoch == epoch}


class Harness:
    """One coordinator with its clock, timer, sink, marker writer and producer ids; `restart()`
    builds a new coordinator from the sink's records (the old one is shut down)."""

    def __init__(self, config: TransactionConfig | None = None, *, defer_writes: bool = False) -> None:
        self.config = config or TransactionConfig()
        self.clock = ManualClock()
        self.sink = InMemoryTxnSink(defer_writes=defer_writes)
        self.markers = RecordingMarkerWriter()
        self.ids = CountingIds()
        self.coordinator = self._build()

    def _build(self) -> TransactionCoordinator:
        self.timer = Timer(self.clock)
        return TransactionCoordinator(self.config, self.clock, self.timer, self.markers, self.ids, self.sink)

    def restart(self) -> TransactionCoordinator:
        self.coordinator.shutdown()
        self.markers.parked.clear()  # in flight to the old coordinator: lost with it
        self.coordinator = self._build()
        self.coordinator.load(list(self.sink.records))
        return self.coordinator

    def state(self, txn_id: str = TXN) -> TransactionMetadata:
        return self.coordinator.transactions[txn_id]

    # -- requests, answered synchronously (None: not answered yet) ----------------------------------

    def init(
        self, txn_id: str | None = TXN, timeout_ms: int = TIMEOUT_MS, producer_id: int = -1, epoch: int = -1
    ) -> InitProducerIdResult | None:
        out: list[InitProducerIdResult] = []
        request = InitProducerIdRequest(txn_id, timeout_ms, producer_id, epoch)
        self.coordinator.init_producer_id(request, out.append)
        return out[0] if out else None

    def init_ok(self, txn_id: str = TXN, timeout_ms: int = TIMEOUT_MS) -> tuple[int, int]:
        result = self.init(txn_id, timeout_ms)
        assert result is not None and result.error is ErrorCode.NONE, result
        return result.producer_id, result.producer_epoch

    def add(self, pid: int, epoch: int, *partitions: TopicPartition, txn_id: str = TXN) -> ErrorCode | None:
        out: list[ErrorCode] = []
        request = AddPartitionsRequest(txn_id, pid, epoch, frozenset(partitions or (tp("t"),)))
        self.coordinator.add_partitions(request, out.append)
        return out[0] if out else None

    def add_offsets(self, pid: int, epoch: int, group: str, txn_id: str = TXN) -> ErrorCode | None:
        out: list[ErrorCode] = []
        self.coordinator.add_offsets(AddOffsetsRequest(txn_id, pid, epoch, group), out.append)
        return out[0] if out else None

    def end(self, pid: int, epoch: int, commit: bool = True, txn_id: str = TXN) -> ErrorCode | None:
        out: list[ErrorCode] = []
        self.coordinator.end_txn(EndTxnRequest(txn_id, pid, epoch, commit), out.append)
        return out[0] if out else None
