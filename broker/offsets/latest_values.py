"""The last value per key of uncompressed data batches, read fast: the reload of millions of records.

A reload reads every record of `__consumer_offsets` only to keep each key's last value. The
coordinator writes the same shapes of batch over and over (a group commits the same partitions
again), so the positions of a batch's keys and values are cached by the batch's size and record
count, as a *layout*. A batch reuses a layout only when its framing bytes (each record's length,
timestamp delta, offset delta, key length and value length varints) equal the layout's byte for
byte: the framing alone decides where every key and value lies, so the slices are then exactly the
ones a record-by-record parse would take. A shape gets its layout the second time it is seen, so
a log whose batches never repeat costs one set lookup a batch more than the plain parse.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from kafkito.broker.log.batch import HEADER_SIZE
from kafkito.protocol.primitives import read_varint

# Layouts held at once, counted in records (~200 bytes each): a few MB at most during a load.
MAX_LAYOUT_RECORDS = 20_000

Latest = dict[bytes, bytes | None]


class _Layout:
    """Where the keys and values of one shape of batch lie, and the framing bytes that prove it."""

    __slots__ = ("expected", "framing", "keys", "records", "values")

    def __init__(self, framing: list[int], expected: tuple[int, ...], keys: list[slice], values: list[slice]):
        self.framing: Any = itemgetter(*framing)  # at least 5 positions a record: always a tuple
        self.expected = expected
        self.keys: Any = itemgetter(*keys)
        self.values: Any = itemgetter(*values)
        self.records = len(keys)


# Markers in place of a layout (no batch has -1 records): a size seen once, whose next batch builds
# its layout; a size whose batch had a record without key or value, parsed record by record.
_SEEN = _Layout([0, 0], (), [slice(0)] * 2, [slice(0)] * 2)
_NO_LAYOUT = _Layout([0, 0], (), [slice(0)] * 2, [slice(0)] * 2)
_SEEN.records = _NO_LAYOUT.records = -1


class LatestValues:
    """Folds the records of uncompressed data batches into `latest` (key -> last value, None for a
    tombstone); records without a key are skipped, as the replay skips them."""

    __slots__ = ("_cached", "_layouts")

    def __init__(self) -> None:
        self._layouts: dict[int, _Layout] = {}  # batch size -> its layout, _SEEN or _NO_LAYOUT
        self._cached = 0

    def take(self, batch: bytes, count: int, latest: Latest) -> None:
        """Fold the `count` records of `batch` (a whole stored batch, header included)."""
        if count > 1:  # one record: no gain from a layout
            layout = self._layouts.get(len(batch))
            if layout is not None and layout.records == count and layout.framing(batch) == layout.expected:
                latest.update(zip(layout.keys(batch), layout.values(batch), strict=False))
                return
            self._learn(layout, batch, count)
        fold_records(batch, count, latest)

    def _learn(self, layout: _Layout | None, batch: bytes, count: int) -> None:
        """A batch its size's layout does not fit: note the size, or build its layout from the batch
        for the next ones (within a budget of cached records, which also bounds the work for sizes
        whose framing keeps changing)."""
        size = len(batch)
        if layout is None or (layout is not _SEEN and layout is not _NO_LAYOUT):
            self._layouts[size] = _SEEN  # first seen, or another framing of the size
        elif layout is _SEEN and self._cached + count <= MAX_LAYOUT_RECORDS:
            self._cached += count
            built = _layout_of(batch, count)
            self._layouts[size] = _NO_LAYOUT if built is None else built


def _layout_of(batch: bytes, count: int) -> _Layout | None:
    """The layout of `batch`, or None if a record has no key or no value (kept off the fast path)."""
    framing: list[int] = []
    keys: list[slice] = []
    values: list[slice] = []
    pos = HEADER_SIZE
    for _ in range(count):
        start = pos
        length, pos = read_varint(batch, pos)
        end = pos + length
        framing.extend(range(start, pos))
        start = pos = pos + 1  # attributes
        _, pos = read_varint(batch, pos)  # timestamp delta
        _, pos = read_varint(batch, pos)  # offset delta
        n, key_at = read_varint(batch, pos)
        framing.extend(range(start, key_at))
        if n < 0:
            return None
        keys.append(slice(key_at, key_at + n))
        value_length_at = key_at + n
        n, value_at = read_varint(batch, value_length_at)
        framing.extend(range(value_length_at, value_at))
        if n < 0:
            return None
        values.append(slice(value_at, value_at + n))
        pos = end
    return _Layout(framing, itemgetter(*framing)(batch), keys, values)


def fold_records(batch: bytes, count: int, latest: Latest) -> None:
    """Parse the records one by one into `latest`; varints of one byte (and the record length's
    usual two) are decoded inline."""
    pos = HEADER_SIZE
    for _ in range(count):
        b = batch[pos]
        if b < 0x80:
            end = pos + 1 + ((b >> 1) ^ -(b & 1))
            pos += 2  # length, attributes
        elif batch[pos + 1] < 0x80:
            z = (b & 0x7F) | (batch[pos + 1] << 7)
            end = pos + 2 + ((z >> 1) ^ -(z & 1))
            pos += 3
        else:
            length, pos = read_varint(batch, pos)
            end = pos + length
            pos += 1
        if batch[pos] < 0x80:  # timestamp delta
            pos += 1
        else:
            _, pos = read_varint(batch, pos)
        if batch[pos] < 0x80:  # offset delta
            pos += 1
        else:
            _, pos = read_varint(batch, pos)
        b = batch[pos]
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, pos = read_varint(batch, pos)
        if n < 0:
            pos = end
            continue
        key = batch[pos : pos + n]
        pos += n
        b = batch[pos]
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, pos = read_varint(batch, pos)
        latest[key] = None if n < 0 else batch[pos : pos + n]
        pos = end
