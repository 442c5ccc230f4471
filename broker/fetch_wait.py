"""Reading a Fetch's partitions from the logs, and DelayedFetch: a fetch parked until min_bytes or timeout.

read_uncommitted reads up to the high watermark; read_committed (isolation level 1) up to the last
stable offset, with the aborted transactions overlapping what it returns.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from kafkito.broker.log.batch import iter_headers
from kafkito.broker.log.errors import LogError, OffsetOutOfRange
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.log.region import FileRegion
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import DelayedOperation

READ_UNCOMMITTED = 0
READ_COMMITTED = 1


class PartitionLogs(Protocol):
    """Where a fetch reads from: the LogManager, or the handlers' `Topics` service over it."""

    def get_log(self, topic: str, partition: int) -> PartitionLog: ...


@dataclass(slots=True)
class PartitionFetch:
    """One partition of a Fetch request, resolved to a topic name."""

    topic: str
    topic_id: uuid.UUID | None
    partition: int
    fetch_offset: int
    max_bytes: int
    error: ErrorCode = ErrorCode.NONE  # set when the request itself names something unknown


@dataclass(slots=True)
class PartitionData:
    error: ErrorCode
    high_watermark: int = -1
    log_start_offset: int = -1
    records: bytes | FileRegion = b""  # a FileRegion: left in the segment file for sendfile
    last_stable_offset: int = -1
    aborted: list[tuple[int, int]] | None = None  # (producer id, first offset); None for read_uncommitted


@dataclass(slots=True)
class FetchResult:
    partitions: list[PartitionData] = field(default_factory=list)
    total_bytes: int = 0
    has_error: bool = False


def read_partitions(
    logs: PartitionLogs,
    wanted: list[PartitionFetch],
    max_bytes: int,
    isolation_level: int = READ_UNCOMMITTED,
    region_at: int | None = None,
) -> FetchResult:
    """Read the partitions in order within the partition and request byte limits.

    As in Kafka, the first batch of the first partition with data is returned whole even when it
    exceeds a limit (so a consumer always progresses); after that, a batch that does not fit the
    limits is left for a later fetch. With `region_at`, a partition's read of at least that many
    bytes is left in its segment file (a FileRegion, sent with sendfile).
    """
    result = FetchResult()
    budget = max_bytes
    committed = isolation_level == READ_COMMITTED
    for p in wanted:
        if p.error:
            result.partitions.append(PartitionData(p.error))
            result.has_error = True
            continue
        try:
            data = _read_partition(
                logs.get_log(p.topic, p.partition), p, budget, result.total_bytes, committed, region_at
            )
        except LogError as exc:
            result.partitions.append(PartitionData(exc.code))
            result.has_error = True
            continue
        result.partitions.append(data)
        result.total_bytes += len(data.records)
        budget -= len(data.records)
    return result


def _read_partition(
    plog: PartitionLog, p: PartitionFetch, budget: int, so_far: int, committed: bool, region_at: int | None
) -> PartitionData:
    hw = plog.high_watermark
    start = plog.log_start_offset
    lso = plog.last_stable_offset
    if not start <= p.fetch_offset <= hw:
        raise OffsetOutOfRange(f"offset {p.fetch_offset} is outside [{start}, {hw}]")
    limit = min(p.max_bytes, budget)
    upper = lso if committed else hw
    records: bytes | FileRegion = b""
    if p.fetch_offset < upper and (limit > 0 or not so_far):
        max_offset = lso if committed else None
        if region_at is None:
            records = plog.read(p.fetch_offset, limit, max_offset)
        else:
            records = plog.read_for_send(p.fetch_offset, limit, max_offset, region_at)
        if len(records) > limit and so_far:
            records = b""  # only the first partition with data may exceed the limits
    aborted = _aborted(plog, p.fetch_offset, records) if committed else None
    return PartitionData(ErrorCode.NONE, hw, start, records, lso, aborted)


def _aborted(plog: PartitionLog, fetch_offset: int, records: bytes | FileRegion) -> list[tuple[int, int]]:
    """The aborted transactions overlapping the batches read (none when nothing was read)."""
    if not records or not plog.aborted_transactions(fetch_offset, plog.last_stable_offset):
        return []
    end = fetch_offset
    for _, header in iter_headers(records if isinstance(records, bytes) else records.read()):
        end = header.next_offset
    return plog.aborted_transactions(fetch_offset, end)


def has_new_data(
    logs: PartitionLogs, wanted: list[PartitionFetch], isolation_level: int = READ_UNCOMMITTED
) -> bool:
    """Whether a parked fetch may have something new: data below its bound (the high watermark, or
    the last stable offset for read_committed), or an error to answer."""
    committed = isolation_level == READ_COMMITTED
    for p in wanted:
        try:
            plog = logs.get_log(p.topic, p.partition)
        except LogError:
            return True  # deleted meanwhile: answer with the error now
        end = plog.log_end_offset
        if p.fetch_offset < plog.log_start_offset or p.fetch_offset > end:
            return True
        if (plog.last_stable_offset if committed else end) > p.fetch_offset:
            return True
    return False


class DelayedFetch(DelayedOperation):
    """Completes when min_bytes are readable (woken by appends and markers on a watched partition) or
    at max_wait; for read_committed only what is below the last stable offset counts, so it wakes
    when the LSO moves, not the high watermark."""

    __slots__ = (
        "_done",
        "_isolation_level",
        "_logs",
        "_max_bytes",
        "_min_bytes",
        "_ready",
        "_region_at",
        "_wanted",
    )

    def __init__(
        self,
        delay_ms: int,
        logs: PartitionLogs,
        wanted: list[PartitionFetch],
        min_bytes: int,
        max_bytes: int,
        done: asyncio.Future[FetchResult],
        isolation_level: int = READ_UNCOMMITTED,
        region_at: int | None = None,
    ) -> None:
        super().__init__(delay_ms)
        self._region_at = region_at
        self._isolation_level = isolation_level
        self._logs = logs
        self._wanted = wanted
        self._min_bytes = min_bytes
        self._max_bytes = max_bytes
        self._done = done
        self._ready: FetchResult | None = None

    def try_complete(self) -> bool:
        if not has_new_data(self._logs, self._wanted, self._isolation_level):
            return False
        result = read_partitions(
            self._logs, self._wanted, self._max_bytes, self._isolation_level, self._region_at
        )
        if result.total_bytes >= self._min_bytes or result.has_error:
            self._ready = result
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        result = self._ready or read_partitions(
            self._logs, self._wanted, self._max_bytes, self._isolation_level, self._region_at
        )
        if not self._done.done():
            self._done.set_result(result)

    def on_expiration(self) -> None:
        pass
