"""Log compaction: rewrite closed segments keeping the last record per key, tombstones until they expire.

Planning reads only closed segments and writes `.cleaned` files, so it may run off the event loop;
`PartitionLog.install_cleaned` swaps them in and must run where appends and reads run.

Transactions, as in Kafka: nothing at or above the last stable offset is cleaned (an open
transaction's records wait for its marker), the records of aborted transactions are removed (and
never hide an older committed value of their key), and a COMMIT or ABORT marker is kept while any
record of its transaction remains, and after that until it is older than delete.retention.ms (a
transaction's records always come before its marker, so one pass in offset order knows).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.log.batch import (
    ATTRIBUTES_AT,
    CRC_AT,
    LAST_OFFSET_DELTA_AT,
    MAX_TIMESTAMP_AT,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    batch_crc,
    set_base_offset,
    set_partition_leader_epoch,
)
from kafkito.broker.log.segment import Segment

if TYPE_CHECKING:
    from kafkito.broker.log.partition_log import PartitionLog
    from kafkito.broker.log.txn_index import AbortedTxn

log = structlog.get_logger(__name__)

CLEANED_SUFFIX = ".cleaned"


@dataclass(slots=True)
class CleanPlan:
    """Cleaned copies of a prefix of closed segments, ready to be swapped in."""

    replacements: list[tuple[Segment, Path]] = field(default_factory=list)
    clean_offset: int = 0  # every offset below this has been compacted
    records_before: int = 0
    records_after: int = 0


def _records(segment: Segment) -> Iterator[tuple[BatchHeader, bytes, list[Any]]]:
    from kafka.record.default_records import DefaultRecordBatch  # off the start-up path

    for position, header in segment.batches():
        raw = segment.read(position, header.size)
        records = [] if header.is_control else list(DefaultRecordBatch(raw))
        yield header, raw, records


def dirty_ratio(segments: list[Segment], clean_offset: int) -> float:
    total = sum(s.size for s in segments)
    dirty = sum(s.size for s in segments if s.next_offset > clean_offset)
    return dirty / total if total else 0.0


def plan_compaction(plog: PartitionLog, now_ms: int, *, force: bool = False) -> CleanPlan | None:
    """Write compacted copies of the cleanable closed segments; None when there is nothing worth doing.

    Cleanable: closed segments (never the active one) whose records are all older than
    min.compaction.lag.ms. The offset map is built over all of them, so a key's older records go
    once a newer one sits in any closed segment. A tombstone (null value) is dropped once its
    timestamp is older than delete.retention.ms.
    """
    config = plog.config
    if not config.compact:
        return None
    cleanable = _cleanable(plog, now_ms)
    if not cleanable:
        return None
    if not force and dirty_ratio(cleanable, plog.cleaner_offset) < config.min_cleanable_dirty_ratio:
        return None
    aborted = _AbortedBatches(plog.aborted_entries(0, cleanable[-1].next_offset))
    latest = _latest_offsets(cleanable, aborted)
    plan = CleanPlan(clean_offset=cleanable[-1].next_offset)
    horizon = now_ms - config.delete_retention_ms
    kept: set[int] = set()
    for segment in cleanable:
        target = segment.path.with_name(segment.path.name + CLEANED_SUFFIX)
        _write_cleaned(segment, target, latest, horizon, plan, aborted, kept)
        plan.replacements.append((segment, target))
    return plan


class _AbortedBatches:
    """Which transactional batches belong to an aborted transaction (the partition's aborted index)."""

    def __init__(self, entries: list[AbortedTxn]) -> None:
        self._ranges: dict[int, list[tuple[int, int]]] = {}
        for e in entries:
            self._ranges.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))

    def __contains__(self, header: BatchHeader) -> bool:
        if not header.is_transactional or header.is_control:
            return False
        ranges = self._ranges.get(header.producer_id, ())
        return any(first <= header.base_offset <= last for first, last in ranges)


def _cleanable(plog: PartitionLog, now_ms: int) -> list[Segment]:
    """The closed segments from the start whose records are all older than min.compaction.lag.ms
    and below the last stable offset."""
    lag = plog.config.min_compaction_lag_ms
    stable = plog.last_stable_offset
    cleanable: list[Segment] = []
    for segment in plog.segments[:-1]:
        if lag > 0 and now_ms - segment.largest_timestamp < lag:
            break
        if segment.next_offset > stable:
            break
        cleanable.append(segment)
    return cleanable


def _latest_offsets(segments: list[Segment], aborted: _AbortedBatches) -> dict[bytes, int]:
    """The offset of each key's last record in `segments`, aborted transactions' records left out."""
    latest: dict[bytes, int] = {}
    for segment in segments:
        for header, _, records in _records(segment):
            if header in aborted:
                continue
            for record in records:
                if record.key is not None:
                    latest[record.key] = record.offset
    return latest


def _write_cleaned(
    segment: Segment,
    target: Path,
    latest: dict[bytes, int],
    horizon: int,
    plan: CleanPlan,
    aborted: _AbortedBatches,
    kept: set[int],
) -> None:
    """Copy `segment` to `target` keeping each key's latest record and tombstones newer than `horizon`,
    nothing of an aborted transaction, and the markers of transactions with records kept (the
    producer ids in `kept`, updated as batches pass) or newer than `horizon`."""
    with open(target, "wb") as out:
        for header, raw, records in _records(segment):
            if header.is_control:
                if header.producer_id in kept or header.max_timestamp >= horizon:
                    out.write(raw)
                kept.discard(header.producer_id)
                continue
            keep = [
                r
                for r in records
                if (r.key is None or latest.get(r.key) == r.offset)
                and not (r.value is None and r.timestamp < horizon)
            ]
            if header in aborted:
                keep = []
            elif keep and header.is_transactional:
                kept.add(header.producer_id)
            plan.records_before += len(records)
            plan.records_after += len(keep)
            if len(keep) == len(records):
                out.write(raw)
            elif keep:
                out.write(_rebuild(header, keep))
        out.flush()
        os.fsync(out.fileno())


def _rebuild(header: BatchHeader, keep: list[Any]) -> bytes:
    """A batch holding only `keep`, with the original offsets, producer fields and last offset delta.

    Keeping baseOffset and lastOffsetDelta means producer state rebuilt from the log still sees the
    batch's whole sequence range, as Kafka's cleaner does.
    """
    from kafka.record.default_records import DefaultRecordBatchBuilder  # off the start-up path

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=header.compression,
        is_transactional=header.is_transactional,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        batch_size=1 << 62,
    )
    for r in keep:
        builder.append(r.offset - header.base_offset, r.timestamp, r.key, r.value, r.headers)
    buf = builder.build()
    set_base_offset(buf, 0, header.base_offset)
    set_partition_leader_epoch(buf, 0, header.partition_leader_epoch)
    struct.pack_into(">i", buf, LAST_OFFSET_DELTA_AT, header.last_offset_delta)
    if header.is_log_append_time:
        (attributes,) = struct.unpack_from(">h", buf, ATTRIBUTES_AT)
        struct.pack_into(">h", buf, ATTRIBUTES_AT, attributes | TIMESTAMP_TYPE_MASK)
        struct.pack_into(">q", buf, MAX_TIMESTAMP_AT, header.max_timestamp)
    struct.pack_into(">I", buf, CRC_AT, batch_crc(buf, 0, len(buf)))
    return bytes(buf)


def install(plog: PartitionLog, plan: CleanPlan) -> bool:
    """Swap a plan in on the log's own thread and log the outcome; False if the log moved on meanwhile."""
    if not plog.install_cleaned(plan):
        log.info("cleaner.plan_discarded", topic=plog.topic, partition=plog.partition)
        return False
    log.info(
        "log.compacted",
        topic=plog.topic,
        partition=plog.partition,
        segments=len(plan.replacements),
        records_before=plan.records_before,
        records_after=plan.records_after,
    )
    return True


def compact(plog: PartitionLog, now_ms: int, *, force: bool = False) -> CleanPlan | None:
    """Plan and install in one go (for callers on the log's own thread); the plan if it was installed."""
    plan = plan_compaction(plog, now_ms, force=force)
    if plan is None or not install(plog, plan):
        return None
    return plan
