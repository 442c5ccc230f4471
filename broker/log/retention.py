"""Which of a partition's oldest segments may go: below the log start, past retention.ms or .bytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafkito.broker.log.segment import Segment

SegmentTest = Callable[[Segment, "Segment | None"], bool]


def deletable_prefix(segments: Sequence[Segment], test: SegmentTest) -> int:
    """How many of the oldest segments pass `test(segment, next_segment)` in a row.

    An empty active segment never goes; an active one with data may (the log rolls a fresh one).
    """
    count = 0
    for i, segment in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if (nxt is None and segment.is_empty) or not test(segment, nxt):
            break
        count += 1
    return count


def below_log_start(log_start_offset: int) -> SegmentTest:
    """Segments whose every offset is below the log start (DeleteRecords moved it past them)."""
    return lambda segment, nxt: nxt is not None and nxt.base_offset <= log_start_offset


def older_than(now_ms: int, retention_ms: int) -> SegmentTest:
    """retention.ms: segments whose newest record is older than that."""
    return lambda segment, nxt: now_ms - segment.largest_timestamp > retention_ms


def beyond_size(segments: Sequence[Segment], retention_bytes: int) -> SegmentTest:
    """retention.bytes: the oldest segments the log can lose and still hold at least that many bytes."""
    excess = sum(s.size for s in segments) - retention_bytes

    def over(segment: Segment, nxt: Segment | None) -> bool:
        nonlocal excess
        if excess - segment.size >= 0:
            excess -= segment.size
            return True
        return False

    return over
