"""Acquiring a share partition's records from its log for one member, and the batches that carry them.

Released (AVAILABLE) records come first, then new ones from `next_offset` up to the high watermark
(read_uncommitted, the default `share.isolation.level`) or the last stable offset (read_committed, whose
aborted transactional batches are archived unseen). New records are taken a whole batch at a time, so
`max_records` may be exceeded to end on a batch boundary (Kafka's batch-optimized acquire mode), or
cut exactly in the record-limit mode. Control batches (transaction markers) are acquired with the
records around them, as Kafka's share partition acquires every batch its log read returned: the member
is given their offsets and acknowledges them (clients send GAP), so the start offset passes a marker
only once its delivery is complete. Aborted batches (read_committed) are archived unseen, after the
records before them are acquired (archived first, they would pass the start over those records).
`max_bytes` is a hard limit, as a Kafka log read's: a batch that does not fit is left for a later
fetch, unless it is the first of the fetch (`min_one`), which is taken whatever its size.

`fetchable_bytes` is Kafka's min-bytes check of a share fetch: the bytes of the batches from the
first record a fetch could acquire up to that bound, measured before anything is acquired.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkito.broker.log.batch import CONTROL_MASK, TRANSACTIONAL_MASK, BatchHeader, iter_headers
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.share.partition import SharePartition
from kafkito.broker.share.states import AcquiredRange

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
BATCH_OPTIMIZED = 0
RECORD_LIMIT = 1
_CHUNK = 256 * 1024


@dataclass(slots=True)
class Acquired:
    records: bytes = b""
    ranges: list[AcquiredRange] = field(default_factory=list)


def acquire(
    sp: SharePartition,
    plog: PartitionLog,
    member_id: str,
    max_records: int,
    max_bytes: int,
    isolation: int = READ_UNCOMMITTED,
    mode: int = BATCH_OPTIMIZED,
    min_one: bool = True,
) -> Acquired:
    """Acquire up to `max_records` for `member_id`; the record batches holding them and their ranges."""
    if sp.start_offset < plog.log_start_offset:
        sp.passed(plog.log_start_offset)
    offsets = sp.available(max_records)
    room = min(max_records - len(offsets), sp.window_room())
    bound = plog.last_stable_offset if isolation == READ_COMMITTED else plog.high_watermark
    skipped: list[int] = []
    if room > 0 and sp.next_offset < bound:
        min_one = min_one and not offsets
        strict = mode == RECORD_LIMIT
        new, skipped = _new_offsets(sp, plog, room, max_bytes, bound, isolation, strict, min_one)
        offsets += new
    ranges = sp.acquire(member_id, offsets) if offsets else []
    if skipped:  # after acquiring: archived first, they would pass the start over the new records
        sp.skip(skipped)
    if not ranges:
        return Acquired()
    return Acquired(_batches_of(plog, ranges), ranges)


def fetchable_bytes(
    sp: SharePartition, plog: PartitionLog, limit: int, isolation: int = READ_UNCOMMITTED
) -> int:
    """The bytes of the batches from the first released record (else `next_offset`) up to the bound,
    counted until `limit` is reached."""
    bound = plog.last_stable_offset if isolation == READ_COMMITTED else plog.high_watermark
    released = sp.available(1)
    position = max(released[0] if released else sp.next_offset, plog.log_start_offset)
    total = 0
    while position < bound and total < limit:
        advanced = False
        for _, header in iter_headers(plog.read(position, limit - total)):
            if header.next_offset <= position or header.base_offset >= bound:
                continue
            advanced = True
            position = header.next_offset
            total += header.size
        if not advanced:
            break
    return total


def _new_offsets(
    sp: SharePartition,
    plog: PartitionLog,
    room: int,
    max_bytes: int,
    bound: int,
    isolation: int,
    strict: bool,
    min_one: bool,
) -> tuple[list[int], list[int]]:
    """The new offsets to acquire (control batches included), and those to archive unseen (aborted
    batches of read_committed)."""
    new: list[int] = []
    skipped: list[int] = []
    aborted = _aborted(plog, sp.next_offset, bound) if isolation == READ_COMMITTED else []
    position = sp.next_offset
    read = 0
    full = False
    while position < bound and len(new) < room and not full:
        chunk = plog.read(position, _CHUNK)
        advanced = False
        for _, header in iter_headers(chunk):
            if header.next_offset <= position or header.base_offset >= bound:
                continue
            if not header.attributes & CONTROL_MASK and _is_aborted(header, aborted):
                advanced = True
                skipped.extend(range(max(header.base_offset, position), min(header.next_offset, bound)))
                position = header.next_offset
                continue
            if read + header.size > max_bytes and (new or not min_one):
                full = True  # a batch that does not fit waits for the next fetch
                break
            advanced = True
            new.extend(range(max(header.base_offset, position), min(header.next_offset, bound)))
            position = header.next_offset
            read += header.size
            if len(new) >= room:
                break
        if not advanced:
            break
    if strict:
        new = new[:room]
        skipped = [o for o in skipped if not new or o < new[-1]]
    return new, skipped


def _aborted(plog: PartitionLog, start: int, end: int) -> list[tuple[int, int, int]]:
    """(producer id, first offset, abort marker offset) of aborted transactions overlapping [start, end)."""
    return [(e.producer_id, e.first_offset, e.last_offset) for e in plog.aborted_entries(start, end)]


def _is_aborted(header: BatchHeader, aborted: list[tuple[int, int, int]]) -> bool:
    if not aborted or not header.attributes & TRANSACTIONAL_MASK:
        return False
    return any(
        pid == header.producer_id and first <= header.base_offset < marker for pid, first, marker in aborted
    )


def _batches_of(plog: PartitionLog, ranges: list[AcquiredRange]) -> bytes:
    """The stored batches overlapping any acquired range, in offset order."""
    out: list[bytes] = []
    last = ranges[-1].last_offset
    position = ranges[0].first_offset
    i = 0
    while position <= last:
        chunk = plog.read(position, _CHUNK)
        view = memoryview(chunk)
        advanced = False
        for pos, header in iter_headers(chunk):
            if header.next_offset <= position:
                continue
            advanced = True
            position = header.next_offset
            while i < len(ranges) and ranges[i].last_offset < header.base_offset:
                i += 1
            if i < len(ranges) and ranges[i].first_offset <= header.last_offset:
                out.append(bytes(view[pos : pos + header.size]))
            if position > last:
                break
        if not advanced:
            break
    return b"".join(out)
