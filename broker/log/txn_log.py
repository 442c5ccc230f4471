"""The transactional side of one partition log: markers into producer state, the aborted index, the LSO.

`PartitionLog` feeds every stored batch through `replay` (at open, after a truncation) or `appended`
(as it writes an end-transaction marker). Producer state then knows each open transaction's first
offset, and the aborted index every ABORT that ended a transaction with records here. The index
lives in memory and in the segments' `.txnindex` files, which `sync_files` rewrites to match the
segments after they were opened or cut.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kafkito.broker.log.batch import BatchHeader
from kafkito.broker.log.control import read_marker
from kafkito.broker.log.producer_state import NO_OFFSET, ProducerStateManager
from kafkito.broker.log.segment import Segment
from kafkito.broker.log.txn_index import (
    TXN_INDEX_SUFFIX,
    AbortedIndex,
    AbortedTxn,
    append_entry,
    read_entries,
    txn_index_path,
    write_entries,
)


class TxnLog:
    """Open transactions and aborted ones for one partition directory."""

    __slots__ = ("aborted", "directory", "producers")

    def __init__(self, directory: Path, producers: ProducerStateManager) -> None:
        self.directory = directory
        self.producers = producers
        self.aborted = AbortedIndex()

    def replay(self, segment: Segment, position: int, header: BatchHeader) -> None:
        """Account for a stored batch, in log order; a control batch's marker is read from the segment."""
        if not header.is_control:
            self.producers.record(header, header.base_offset, header.max_timestamp)
            return
        marker = read_marker(segment.read(position, header.size), header)
        if marker is None:
            return
        self.ended(header, header.base_offset, header.max_timestamp, marker.commit, marker.coordinator_epoch)

    def ended(
        self, header: BatchHeader, offset: int, timestamp: int, commit: bool, coordinator_epoch: int
    ) -> AbortedTxn | None:
        """A marker at `offset` ends its producer's transaction; the new aborted entry, if any."""
        first = self.producers.record(header, offset, timestamp, coordinator_epoch)
        if commit or first == NO_OFFSET:
            return None
        unstable = self.producers.first_unstable_offset()
        entry = AbortedTxn(header.producer_id, first, offset, offset + 1 if unstable is None else unstable)
        return entry if self.aborted.add(entry) else None

    def appended(self, entry: AbortedTxn, segment: Segment) -> None:
        """Write an aborted entry to the file of the segment its marker went to."""
        append_entry(txn_index_path(self.directory, segment.base_offset), entry)

    def last_stable_offset(self, log_start_offset: int, high_watermark: int) -> int:
        """The first offset of the earliest open transaction, else the high watermark; never below
        the log start (as Kafka bounds it)."""
        unstable = self.producers.first_unstable_offset()
        if unstable is None or unstable >= high_watermark:
            return high_watermark
        return max(unstable, log_start_offset)

    def clear(self) -> None:
        self.producers.clear()
        self.aborted.clear()

    def sync_files(self, segments: Sequence[Segment]) -> None:
        """Make each segment's `.txnindex` file hold exactly the entries of the markers in it, and
        remove files no segment owns."""
        present = {name for name in os.listdir(self.directory) if name.endswith(TXN_INDEX_SUFFIX)}
        owned: set[str] = set()
        for i, segment in enumerate(segments):
            end = segments[i + 1].base_offset if i + 1 < len(segments) else segment.next_offset
            path = txn_index_path(self.directory, segment.base_offset)
            owned.add(path.name)
            entries = self.aborted.in_range(segment.base_offset, max(end, segment.next_offset))
            stored = read_entries(path) if path.name in present else None
            if stored != (entries or None):
                write_entries(path, entries)
        for stray in present - owned:
            (self.directory / stray).unlink()
