"""Finding stored batches in a segment list: where whole batches from an offset lie, or their headers."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from kafkito.broker.log.batch import BatchHeader
from kafkito.broker.log.segment import Segment


def locate_batches(
    segments: Sequence[Segment], bases: Sequence[int], offset: int, max_bytes: int, max_offset: int | None
) -> tuple[Segment, int, int] | None:
    """Where a read of whole batches from the first one whose last offset is >= `offset` lies: its
    segment, and the start and end of its bytes in the segment's file (None: nothing to read).

    `bases` are the segments' base offsets. The first batch always counts whole (a consumer must
    progress); later ones stop before `max_bytes` would be exceeded or `max_offset` reached. An
    offset in a gap (compaction, skipped damage) reads from the next batch after it. Reads stay
    within one segment.
    """
    i = max(bisect_right(bases, offset) - 1, 0)
    for segment in segments[i:]:
        found = segment.find(offset)
        if found is None:
            continue
        position, first = found
        if max_offset is not None and first.base_offset >= max_offset:
            return None
        return segment, position, segment.end_of_read(position, first, max_bytes, max_offset)
    return None


def batch_headers(segments: Sequence[Segment], bases: Sequence[int], offset: int) -> list[BatchHeader]:
    """Headers of every stored batch from the one holding `offset` on."""
    out: list[BatchHeader] = []
    i = max(bisect_right(bases, offset) - 1, 0)
    for segment in segments[i:]:
        found = segment.find(offset)
        if found is None:
            continue
        out.extend(h for _, h in segment.batches(found[0]))
    return out
