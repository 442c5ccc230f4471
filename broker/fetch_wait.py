"""Reading a Fetch's partitions from the logs, and DelayedFetch: a fetch parked until min_bytes or timeout."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from kafkito.broker.log.errors import LogError, OffsetOutOfRange
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import DelayedOperation


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
    records: bytes = b""


@dataclass(slots=True)
class FetchResult:
    partitions: list[PartitionData] = field(default_factory=list)
    total_bytes: int = 0
    has_error: bool = False


def read_partitions(logs: PartitionLogs, wanted: list[PartitionFetch], max_bytes: int) -> FetchResult:
    """Read the partitions in order within the partition and request byte limits.

    As in Kafka, the first batch of the first partition with data is returned whole even when it
    exceeds a limit (so a consumer always progresses); after that, a batch that does not fit the
    limits is left for a later fetch.
    """
    result = FetchResult()
    budget = max_bytes
    for p in wanted:
        if p.error:
            result.partitions.append(PartitionData(p.error))
            result.has_error = True
            continue
        try:
            plog = logs.get_log(p.topic, p.partition)
            hw = plog.high_watermark
            start = plog.log_start_offset
            if not start <= p.fetch_offset <= hw:
                raise OffsetOutOfRange(f"offset {p.fetch_offset} is outside [{start}, {hw}]")
            limit = min(p.max_bytes, budget)
            records = b""
            if p.fetch_offset < hw and (limit > 0 or not result.total_bytes):
                records = plog.read(p.fetch_offset, limit)
                if len(records) > limit and result.total_bytes:
                    records = b""  # only the first partition with data may exceed the limits
        except LogError as exc:
            result.partitions.append(PartitionData(exc.code))
            result.has_error = True
            continue
        result.partitions.append(PartitionData(ErrorCode.NONE, hw, start, records))
        result.total_bytes += len(records)
        budget -= len(records)
    return result


def has_new_data(logs: PartitionLogs, wanted: list[PartitionFetch]) -> bool:
    for p in wanted:
        try:
            plog = logs.get_log(p.topic, p.partition)
        except LogError:
            return True  # deleted meanwhile: answer with the error now
        end = plog.log_end_offset
        if p.fetch_offset < plog.log_start_offset or p.fetch_offset > end or end > p.fetch_offset:
            return True
    return False


class DelayedFetch(DelayedOperation):
    """Completes when min_bytes are readable (woken by appends to a watched partition) or at max_wait."""

    __slots__ = ("_done", "_logs", "_max_bytes", "_min_bytes", "_ready", "_wanted")

    def __init__(
        self,
        delay_ms: int,
        logs: PartitionLogs,
        wanted: list[PartitionFetch],
        min_bytes: int,
        max_bytes: int,
        done: asyncio.Future[FetchResult],
    ) -> None:
        super().__init__(delay_ms)
        self._logs = logs
        self._wanted = wanted
        self._min_bytes = min_bytes
        self._max_bytes = max_bytes
        self._done = done
        self._ready: FetchResult | None = None

    def try_complete(self) -> bool:
        if not has_new_data(self._logs, self._wanted):
            return False
        result = read_partitions(self._logs, self._wanted, self._max_bytes)
        if result.total_bytes >= self._min_bytes or result.has_error:
            self._ready = result
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        result = self._ready or read_partitions(self._logs, self._wanted, self._max_bytes)
        if not self._done.done():
            self._done.set_result(result)

    def on_expiration(self) -> None:
        pass
