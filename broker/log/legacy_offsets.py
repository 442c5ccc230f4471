"""ListOffsets v0's answer: offsets before a time, chosen by segment as Kafka's old API did.

Kafka answers v0 from the segments, not the records: each segment's base offset (at least the log
start offset) paired with the file's last-modified time, plus the log end offset at "now" when the
active segment holds anything. LATEST (-1) starts from the last entry, EARLIEST (-2) from the first,
a time from the last entry modified at or before it; up to `max_num_offsets` offsets are returned
from there back, largest first.
"""

from __future__ import annotations

import os

from kafkito.broker.log.segmented_log import SegmentedLog, wall_clock_ms

LATEST = -1
EARLIEST = -2


def offsets_before(
    log: SegmentedLog, timestamp: int, max_num_offsets: int, now_ms: int | None = None
) -> list[int]:
    """The offsets ListOffsets v0 answers for one partition (a consumer's request: none above the
    high watermark)."""
    segments = log.segments
    start = log.log_start_offset
    entries = [(max(s.base_offset, start), os.stat(s.path).st_mtime_ns // 1_000_000) for s in segments]
    if segments[-1].size > 0:
        entries.append((log.log_end_offset, wall_clock_ms() if now_ms is None else now_ms))
    if timestamp == LATEST:
        index = len(entries) - 1
    elif timestamp == EARLIEST:
        index = 0
    else:
        index = len(entries) - 1
        while index >= 0 and entries[index][1] > timestamp:
            index -= 1
    count = max(0, min(max_num_offsets, index + 1))
    offsets = sorted((entries[index - j][0] for j in range(count)), reverse=True)
    hw = log.high_watermark
    if any(o > hw for o in offsets):
        offsets = [hw] + [o for o in offsets if o <= hw]
    return offsets
