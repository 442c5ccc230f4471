"""The message browser across a topic's partitions: the newest records first, filtered by key, value,
header and a time range, at most `limit` of them.

Each partition is read backwards from its high watermark in windows that double in size, keeping
the newest `limit` records that pass the filters; the partitions' finds are then merged by
timestamp (newest first; offset, then partition, break ties). The newest `limit` of the topic are
among the newest `limit` of each partition, so the merge is exact while each partition's
timestamps grow with its offsets (Kafka does not enforce that for CreateTime). A time range first
narrows each partition to the offsets ListOffsets would give for its ends, then every record's
own timestamp is checked. At most `MAX_SCANNED` records are read per request: `complete` says
whether every candidate was looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkito.broker.console.messages import MAX_LIMIT, record_view, records_between
from kafkito.broker.console.topics import NotFound

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

FIRST_WINDOW = 256  # records read at the end of a partition first; doubled on each step back
MAX_SCANNED = 200_000


@dataclass(frozen=True, slots=True)
class Filters:
    """What a record must match: substrings of its key and value (as UTF-8 text, undecodable bytes
    replaced), a header (`name`, or `name=value-substring`) and a time range (epoch ms, inclusive)."""

    key: str = ""
    value: str = ""
    header: str = ""
    from_ms: int | None = None
    to_ms: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "header": self.header,
            "from_ms": self.from_ms,
            "to_ms": self.to_ms,
        }

    def matches(self, record: Any) -> bool:
        if self.from_ms is not None and record.timestamp < self.from_ms:
            return False
        if self.to_ms is not None and record.timestamp > self.to_ms:
            return False
        if self.key and self.key not in _text(record.key):
            return False
        if self.value and self.value not in _text(record.value):
            return False
        return not self.header or self._header_matches(record.headers or ())

    def _header_matches(self, headers: Any) -> bool:
        name, has_value, wanted = self.header.partition("=")
        return any(key == name and (not has_value or wanted in _text(value)) for key, value in headers)


def _text(data: Any) -> str:
    return "" if data is None else bytes(data).decode("utf-8", "replace")


def _bounds(log: Any, filters: Filters) -> tuple[int, int]:
    """The offsets of one partition that can hold records of the time range."""
    low, high = log.log_start_offset, log.high_watermark
    if filters.from_ms is not None:
        found = log.offset_for_timestamp(filters.from_ms)
        low = high if found is None else max(low, found.offset)
    if filters.to_ms is not None:
        after = log.offset_for_timestamp(filters.to_ms + 1)
        if after is not None:
            high = min(high, after.offset)
    return low, high


def _newest_in_partition(log: Any, filters: Filters, limit: int, budget: int) -> tuple[list[Any], int, bool]:
    """Up to `limit` matching records of one partition, newest first; records read; whether done."""
    low, end = _bounds(log, filters)
    found: list[Any] = []
    scanned = 0
    window = FIRST_WINDOW
    while end > low and len(found) < limit:
        if scanned >= budget:
            return found, scanned, False
        start = max(low, end - min(window, budget - scanned))
        chunk = list(records_between(log, start, end))
        scanned += len(chunk)
        for record in reversed(chunk):
            if filters.matches(record):
                found.append(record)
                if len(found) >= limit:
                    break
        end, window = start, window * 2
    return found, scanned, True


def search(
    broker: Broker,
    topic: str,
    filters: Filters,
    *,
    limit: int = 50,
    partition: int | None = None,
    fmt: str = "auto",
) -> dict[str, Any]:
    """The newest `limit` records of `topic` (or of one partition) that match `filters`."""
    info = broker.logs.topic(topic)
    if info is None:
        raise NotFound(f"no topic {topic}")
    if partition is not None and not 0 <= partition < info.partitions:
        raise NotFound(f"topic {topic} has no partition {partition}")
    limit = max(1, min(limit, MAX_LIMIT))
    partitions = [partition] if partition is not None else list(range(info.partitions))
    hits: list[tuple[int, Any]] = []
    scanned, complete = 0, True
    for p in partitions:
        found, read, done = _newest_in_partition(
            broker.logs.get_log(topic, p), filters, limit, MAX_SCANNED - scanned
        )
        scanned += read
        complete = complete and done
        hits.extend((p, record) for record in found)
    hits.sort(key=lambda hit: (hit[1].timestamp, hit[1].offset, -hit[0]), reverse=True)
    records = [{"partition": p, **record_view(record, fmt)} for p, record in hits[:limit]]
    return {
        "topic": topic,
        "partitions": partitions,
        "filters": filters.as_dict(),
        "limit": limit,
        "records": records,
        "scanned": scanned,
        "complete": complete,
    }
