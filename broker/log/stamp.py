"""Stamping a produce request's batches for storage: offsets, leader epoch, LogAppendTime, in place."""

from __future__ import annotations

from kafkito.broker.log.batch import (
    BatchHeader,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
)


def stamp_batches(
    buf: bytearray,
    batches: list[tuple[int, BatchHeader]],
    base_offset: int,
    leader_epoch: int,
    append_time: int,
) -> tuple[list[tuple[BatchHeader, int, int]], int]:
    """Assign consecutive offsets from `base_offset` to the batches in `buf` (and LogAppendTime when
    `append_time` is not -1). Returns (header as sent, its base offset, its timestamp) for each, and
    the offset after the last."""
    stored: list[tuple[BatchHeader, int, int]] = []
    next_offset = base_offset
    for pos, header in batches:
        set_base_offset(buf, pos, next_offset)
        set_partition_leader_epoch(buf, pos, leader_epoch)
        timestamp = header.max_timestamp
        if append_time >= 0:
            set_log_append_time(buf, pos, header.size, append_time)
            timestamp = append_time
        stored.append((header, next_offset, timestamp))
        next_offset += header.last_offset_delta + 1
    return stored, next_offset


def assign_offsets(
    batches: list[tuple[int, BatchHeader]], base_offset: int
) -> tuple[list[tuple[BatchHeader, int, int]], list[tuple[int, BatchHeader]], int]:
    """`stamp_batches` without touching the bytes (CreateTime: only the offsets and epoch change, which
    the segment stamps as it writes). Returns what `stamp_batches` does, plus (position, header with
    its base offset) of each batch for `Segment.append_stamped`."""
    stored: list[tuple[BatchHeader, int, int]] = []
    placed: list[tuple[int, BatchHeader]] = []
    next_offset = base_offset
    for pos, header in batches:
        stored.append((header, next_offset, header.max_timestamp))
        placed.append((pos, header._replace(base_offset=next_offset)))
        next_offset += header.last_offset_delta + 1
    return stored, placed, next_offset
