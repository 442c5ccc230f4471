"""The aborted-transactions index of one partition: in memory for Fetch, and Kafka's `.txnindex` files.

An entry is one aborted transaction: its producer id, its first offset, its last offset (the offset
of the ABORT marker) and the last stable offset right after it ended. Entries are kept in the order
their markers were written, so by last offset. The file of a segment, `<base offset>.txnindex`
beside `<base offset>.log`, holds the entries whose markers are in that segment, each as Kafka
writes them: int16 version 0, int64 producer id, int64 first offset, int64 last offset, int64 last
stable offset. The log rebuilds the entries from its control batches at open and rewrites a file
that disagrees, so a file is never trusted over the segment it sits beside.
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's offset
    last_stable_offset: int  # the partition's LSO once this transaction ended


def txn_index_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{base_offset:020d}{TXN_INDEX_SUFFIX}"


def encode_entries(entries: Iterable[AbortedTxn]) -> bytes:
    return b"".join(_ENTRY.pack(_VERSION, *e) for e in entries)


def read_entries(path: Path) -> list[AbortedTxn] | None:
    """The entries of a `.txnindex` file; None if it is missing or not a whole number of entries."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if len(data) % _ENTRY.size:
        return None
    return [AbortedTxn(*fields[1:]) for fields in _ENTRY.iter_unpack(data)]


def append_entry(path: Path, entry: AbortedTxn) -> None:
    """Add one entry at the end of a segment's file (created if missing)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, encode_entries([entry]))
    finally:
        os.close(fd)


def write_entries(path: Path, entries: list[AbortedTxn]) -> None:
    """Replace a segment's file with `entries` (removed when there are none); a crash leaves either."""
    if not entries:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(encode_entries(entries))
    os.replace(tmp, path)


class AbortedIndex:
    """The aborted transactions of a partition, ordered by the offset of their ABORT markers."""

    __slots__ = ("_entries", "_last_offsets")

    def __init__(self) -> None:
        self._entries: list[AbortedTxn] = []
        self._last_offsets: list[int] = []

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AbortedTxn]:
        return iter(self._entries)

    def add(self, entry: AbortedTxn) -> bool:
        """Add an entry past the last one; False (ignored) for a marker already indexed (a replay)."""
        if self._last_offsets and entry.last_offset <= self._last_offsets[-1]:
            return False
        self._entries.append(entry)
        self._last_offsets.append(entry.last_offset)
        return True

    def overlapping(self, start: int, end: int) -> list[AbortedTxn]:
        """Every aborted transaction with offsets in [start, end): it ended at or after `start` and
        began before `end`.

        The walk stops after an entry whose last stable offset reaches `end`: every transaction that
        ended later was still open then or began after it, so it began at or after that offset
        (Kafka's rule).
        """
        out: list[AbortedTxn] = []
        entries = self._entries
        for i in range(bisect_left(self._last_offsets, start), len(entries)):
            entry = entries[i]
            if entry.first_offset < end:
                out.append(entry)
            if entry.last_stable_offset >= end:
                break
        return out

    def in_range(self, start: int, end: int) -> list[AbortedTxn]:
        """The entries whose markers are at offsets in [start, end) (one segment's file)."""
        lo = bisect_left(self._last_offsets, start)
        hi = bisect_left(self._last_offsets, end)
        return self._entries[lo:hi]

    def drop_below(self, offset: int) -> None:
        """Forget the entries whose markers are below `offset` (their segments were deleted)."""
        cut = bisect_left(self._last_offsets, offset)
        del self._entries[:cut]
        del self._last_offsets[:cut]

    def clear(self) -> None:
        self._entries.clear()
        self._last_offsets.clear()
