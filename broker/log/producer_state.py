"""Producer state of one partition: epochs, sequences and the last batches (dedup), open transactions.

A transactional producer's transaction is open on this partition from its first transactional batch
to the COMMIT or ABORT control batch that ends it; the earliest open one bounds the last stable
offset. Everything here is rebuilt by replaying the log's batch headers in order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkito.broker.log.batch import CONTROL_MASK, INT32_MAX, NO_SEQUENCE, TRANSACTIONAL_MASK, BatchHeader
from kafkito.broker.log.errors import (
    InvalidProducerEpoch,
    InvalidTxnState,
    OutOfOrderSequence,
    TransactionCoordinatorFenced,
)

NUM_BATCHES_TO_RETAIN = 5  # Kafka keeps the metadata of the last 5 batches per producer
NO_PRODUCER_EPOCH = -1
NO_OFFSET = -1


class BatchMetadata(NamedTuple):
    """What a retried batch needs to be acknowledged again: its sequences and assigned offsets."""

    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    """The latest known state of one producer id on this partition."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    last_timestamp: int = -1
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    coordinator_epoch: int = -1  # of the last end-transaction marker
    current_txn_first_offset: int = NO_OFFSET  # the open transaction's first offset on this partition

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        first, last = header.base_sequence, header.last_sequence
        for meta in self.batches:
            if meta.first_seq == first and meta.last_seq == last:
                return meta
        return None

    def add(self, header: BatchHeader, base_offset: int, timestamp: int) -> None:
        self.last_timestamp = max(self.last_timestamp, timestamp)
        if header.producer_epoch != self.epoch:
            self.epoch = header.producer_epoch
            self.batches.clear()
        if header.is_control:
            return
        self.batches.append(
            BatchMetadata(
                header.base_sequence,
                header.last_sequence,
                base_offset,
                base_offset + header.last_offset_delta,
                timestamp,
            )
        )


@dataclass(slots=True)
class ProducerSnapshot:
    """One producer's state as DescribeProducers reports it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int  # -1 when no transaction is open


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """Validates producer epochs/sequences on append and remembers enough to spot retried batches."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerEntry] = {}
        self._ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction

    def __len__(self) -> int:
        return len(self._producers)

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self._producers.get(producer_id)

    def find_duplicate(self, headers: Iterable[BatchHeader]) -> BatchMetadata | None:
        """The stored metadata of the first batch that is a retry of an already appended one."""
        for header in headers:
            if not header.has_producer_id:
                continue
            entry = self._producers.get(header.producer_id)
            if entry is not None:
                meta = entry.find_duplicate(header)
                if meta is not None:
                    return meta
        return None

    def validate(self, headers: Iterable[BatchHeader]) -> None:
        """Check the batches of one append in order, as if each earlier one had been appended.

        Raises INVALID_PRODUCER_EPOCH for a fenced (older) epoch, OUT_OF_ORDER_SEQUENCE_NUMBER for a
        sequence that does not follow the producer's last one, and INVALID_TXN_STATE for a plain
        batch from a producer whose transaction is open here. A producer we know nothing of (new, or
        its batches are gone) may start at any sequence, as in Kafka.
        """
        pending: dict[int, tuple[int, int, bool]] = {}  # producer id -> (epoch, last seq, in txn)
        for header in headers:
            if not header.has_producer_id or header.is_control:
                continue
            pid = header.producer_id
            if pid in pending:
                epoch, last_seq, in_txn = pending[pid]
            else:
                entry = self._producers.get(pid)
                if entry is None:
                    epoch, last_seq, in_txn = NO_PRODUCER_EPOCH, NO_SEQUENCE, False
                else:
                    epoch, last_seq = entry.epoch, entry.last_seq
                    in_txn = entry.current_txn_first_offset != NO_OFFSET
            _check_sequence(header, epoch, last_seq)
            transactional = header.is_transactional
            if in_txn and not transactional:
                raise InvalidTxnState(f"producer {pid} sent a non-transactional batch inside a transaction")
            pending[pid] = (header.producer_epoch, header.last_sequence, in_txn or transactional)

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int) -> None:
        """An end-transaction marker must not come from a fenced producer epoch or coordinator epoch."""
        entry = self._producers.get(producer_id)
        if entry is None:
            return
        if producer_epoch < entry.epoch:
            raise InvalidProducerEpoch(
                f"marker for producer {producer_id} epoch {producer_epoch} is older than epoch {entry.epoch}"
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFenced(
                f"marker for producer {producer_id} from coordinator epoch {coordinator_epoch}, "
                f"older than {entry.coordinator_epoch}"
            )

    def record(
        self, header: BatchHeader, base_offset: int, timestamp: int, coordinator_epoch: int = -1
    ) -> int:
        """Remember an appended batch (also used to replay the log on startup).

        A transactional batch opens its producer's transaction if none is open; a control batch
        (`coordinator_epoch` from its marker) ends it. Returns the first offset of the transaction a
        control batch ended, else -1.
        """
        if header.producer_id < 0:
            return NO_OFFSET
        entry = self._producers.get(header.producer_id)
        if entry is None:
            entry = self._producers[header.producer_id] = ProducerEntry(header.producer_id)
        entry.add(header, base_offset, timestamp)
        attributes = header.attributes
        if not attributes & TRANSACTIONAL_MASK:
            return NO_OFFSET
        first = entry.current_txn_first_offset
        if attributes & CONTROL_MASK:
            entry.coordinator_epoch = max(entry.coordinator_epoch, coordinator_epoch)
            entry.current_txn_first_offset = NO_OFFSET
            self._ongoing.pop(header.producer_id, None)
            return first
        if first == NO_OFFSET:
            entry.current_txn_first_offset = base_offset
            self._ongoing[header.producer_id] = base_offset
        return NO_OFFSET

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, or None when none is open."""
        ongoing = self._ongoing
        if not ongoing:
            return None
        return min(ongoing.values())

    def ongoing(self) -> dict[int, int]:
        """Producer id -> first offset of each open transaction."""
        return dict(self._ongoing)

    def snapshot(self) -> list[ProducerSnapshot]:
        return [
            ProducerSnapshot(
                e.producer_id,
                e.epoch,
                e.last_seq,
                e.last_timestamp,
                e.coordinator_epoch,
                e.current_txn_first_offset,
            )
            for e in self._producers.values()
        ]

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers silent for longer than producer.id.expiration.ms (never one whose
        transaction is open, as in Kafka); returns how many."""
        stale = [
            pid
            for pid, e in self._producers.items()
            if now_ms - e.last_timestamp > expiration_ms and e.current_txn_first_offset == NO_OFFSET
        ]
        for pid in stale:
            del self._producers[pid]
        return len(stale)

    def clear(self) -> None:
        self._producers.clear()
        self._ongoing.clear()


def _check_sequence(header: BatchHeader, epoch: int, last_seq: int) -> None:
    pid = header.producer_id
    if header.producer_epoch < epoch:
        raise InvalidProducerEpoch(
            f"producer {pid} epoch {header.producer_epoch} is older than the current epoch {epoch}"
        )
    if header.producer_epoch != epoch:
        if header.base_sequence != 0 and epoch != NO_PRODUCER_EPOCH:
            raise OutOfOrderSequence(
                f"producer {pid} new epoch {header.producer_epoch} must start at sequence 0, "
                f"got {header.base_sequence}"
            )
    elif last_seq != NO_SEQUENCE and not _in_sequence(last_seq, header.base_sequence):
        raise OutOfOrderSequence(
            f"producer {pid} sent sequence {header.base_sequence}, expected {last_seq + 1}"
        )
