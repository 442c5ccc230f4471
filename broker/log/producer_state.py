"""Idempotent-producer state of one partition: epochs, sequences and the last batches for dedup."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkito.broker.log.batch import INT32_MAX, NO_SEQUENCE, BatchHeader
from kafkito.broker.log.errors import InvalidProducerEpoch, OutOfOrderSequence

NUM_BATCHES_TO_RETAIN = 5  # Kafka keeps the metadata of the last 5 batches per producer
NO_PRODUCER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
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


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """Validates producer epochs/sequences on append and remembers enough to spot retried batches."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerEntry] = {}

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

        Raises INVALID_PRODUCER_EPOCH for a fenced (older) epoch and OUT_OF_ORDER_SEQUENCE_NUMBER
        for a sequence that does not follow the producer's last one. A producer we know nothing of
        (new, or its batches are gone) may start at any sequence, as in Kafka.
        """
        pending: dict[int, tuple[int, int]] = {}  # producer id -> (epoch, last seq) after earlier batches
        for header in headers:
            if not header.has_producer_id or header.is_control:
                continue
            pid = header.producer_id
            if pid in pending:
                epoch, last_seq = pending[pid]
            else:
                entry = self._producers.get(pid)
                epoch, last_seq = (entry.epoch, entry.last_seq) if entry else (NO_PRODUCER_EPOCH, NO_SEQUENCE)
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
            pending[pid] = (header.producer_epoch, header.last_sequence)

    def record(self, header: BatchHeader, base_offset: int, timestamp: int) -> None:
        """Remember an appended batch (also used to replay the log on startup)."""
        if not header.has_producer_id:
            return
        entry = self._producers.get(header.producer_id)
        if entry is None:
            entry = self._producers[header.producer_id] = ProducerEntry(header.producer_id)
        entry.add(header, base_offset, timestamp)

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers silent for longer than producer.id.expiration.ms; returns how many."""
        stale = [pid for pid, e in self._producers.items() if now_ms - e.last_timestamp > expiration_ms]
        for pid in stale:
            del self._producers[pid]
        return len(stale)

    def clear(self) -> None:
        self._producers.clear()
