"""ListOffsets by time over a partition's segments: the first record at or after a timestamp, the newest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from kafkito.broker.log.batch import HEADER_SIZE, BatchHeader, parse_header
from kafkito.broker.log.segment import Segment


class TimestampOffset(NamedTuple):
    """A ListOffsets answer: the record's timestamp and offset."""

    timestamp: int
    offset: int


def offset_for_timestamp(
    segments: Sequence[Segment], log_start: int, timestamp: int
) -> TimestampOffset | None:
    """The first record with timestamp >= `timestamp` at or after `log_start`, or None."""
    for segment in segments:
        found = segment.find_by_timestamp(timestamp)
        if found is None:
            continue
        for position, header in segment.batches(found[0]):
            if header.max_timestamp < timestamp or header.last_offset < log_start:
                continue
            for record_ts, offset in record_timestamps(segment, position, header):
                if record_ts >= timestamp and offset >= log_start:
                    return TimestampOffset(record_ts, offset)
    return None


def max_timestamp_offset(segments: Sequence[Segment]) -> TimestampOffset | None:
    """The record with the largest timestamp (ListOffsets MAX_TIMESTAMP), earliest on ties."""
    best: tuple[Segment, int] | None = None
    best_ts = -1
    for segment in segments:
        if segment.max_timestamp > best_ts and segment.max_timestamp_position >= 0:
            best, best_ts = (segment, segment.max_timestamp_position), segment.max_timestamp
    if best is None:
        return None
    segment, position = best
    header = parse_header(segment.read(position, HEADER_SIZE))
    for record_ts, offset in record_timestamps(segment, position, header):
        if record_ts == best_ts:
            return TimestampOffset(record_ts, offset)
    return TimestampOffset(best_ts, header.last_offset)


def record_timestamps(segment: Segment, position: int, header: BatchHeader) -> list[tuple[int, int]]:
    """(timestamp, offset) of each record in a stored batch; decodes it (off the hot path)."""
    if header.is_log_append_time:
        count = header.last_offset_delta + 1
        return [(header.max_timestamp, header.base_offset + i) for i in range(count)]
    from kafka.record.default_records import DefaultRecordBatch

    batch = DefaultRecordBatch(segment.read(position, header.size))
    return [(record.timestamp, record.offset) for record in batch]
