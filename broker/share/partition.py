"""SharePartition: the record states of one (group, topic, partition), sans-io.

Records from the share-partition start offset on are tracked one by one (`InFlight`): acquired by one
member under a time-limited lock, then acknowledged (ACCEPT), released for redelivery (RELEASE, or the
lock expiring) or archived (REJECT, GAP, or a release once `group.share.delivery.count.limit` is
reached). The start offset moves past every record whose delivery is complete; `next_offset` is the
first offset never handed out. At most `group.share.partition.max.record.locks` offsets lie between the
two, as Kafka bounds a share partition's in-flight window. Locks are tasks on the broker's purgatory
timer, so advancing the broker clock expires them at once. Each change is told to `on_write` as Kafka's
share partition writes its state (start offset and changed state batches; acquisitions are not written).
An acknowledgement, a release or a lock expiry is written with the start offset as it was before that
change moved it, as Kafka's share partition writes first and moves its start offset once the write is
done: the persisted start offset (what DescribeShareGroupOffsets reports) catches up with the next write.
Each write also carries the delivery-complete count (KIP-1226): how many records at or past the start
offset it carries are ACKNOWLEDGED or ARCHIVED, so that the share group's lag can leave them out.
Records archived by a REJECT or by the delivery count limit are told to `on_archive` first, with their
delivery counts and why (KIP-1191: the group's dead-letter queue, `dead_letters.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkito.broker.share.states import AckType, AcquiredRange, InFlight, RecordState, StateBatch, runs
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Timer, TimerTask

WriteState = Callable[[int, int, list[StateBatch]], None]  # (start offset, delivery complete, changed)
Archived = Callable[[list[tuple[int, int]], str], None]  # ((offset, delivery count) ..., why)
REJECTED = "Offset rejected by client."
DELIVERY_COUNT_EXCEEDED = "Offset delivery count exceeded the threshold."


@dataclass(frozen=True, slots=True)
class ShareLimits:
    record_lock_duration_ms: int = 30_000  # group.share.record.lock.duration.ms
    delivery_count_limit: int = 5  # group.share.delivery.count.limit
    max_record_locks: int = 2_000  # group.share.partition.max.record.locks


_ACK_TYPES = frozenset(int(t) for t in AckType)


class _Lock(TimerTask):
    """The acquisition lock of the records one acquisition (or renewal) gave a member."""

    __slots__ = ("_owner", "held", "offsets")

    def __init__(self, delay_ms: int, owner: SharePartition, offsets: list[int]) -> None:
        super().__init__(delay_ms)
        self._owner = owner
        self.offsets = offsets
        self.held = len(offsets)  # records still under this lock

    def run(self) -> None:
        self._owner._lock_expired(self)


class SharePartition:
    """One share partition's in-flight records, start offset and locks."""

    __slots__ = (
        "delivery_complete",
        "key",
        "limits",
        "next_offset",
        "on_archive",
        "on_release",
        "on_write",
        "records",
        "start_offset",
        "timer",
    )

    def __init__(
        self,
        key: tuple[str, object, int],
        start_offset: int,
        timer: Timer,
        limits: ShareLimits,
        on_write: WriteState = lambda _s, _c, _b: None,
        on_release: Callable[[], None] = lambda: None,
    ) -> None:
        self.key = key
        self.start_offset = start_offset
        self.next_offset = start_offset
        self.timer = timer
        self.limits = limits
        self.on_write = on_write
        self.on_release = on_release  # records became available again: wake parked share fetches
        self.on_archive: Archived = lambda _records, _why: None  # the group's dead-letter queue
        self.records: dict[int, InFlight] = {}
        self.delivery_complete = 0  # records in `records` (all at or past the start) in a terminal state

    # -- recovery ------------------------------------------------------------------------------

    def restore(self, start_offset: int, batches: Sequence[StateBatch]) -> None:
        """The persisted state: terminal records stay so, the rest are AVAILABLE with their counts.

        Offsets past the start offset that no batch names (acquired, never written) are fetched again.
        """
        self.cancel_locks()
        self.records.clear()
        self.start_offset = self.next_offset = start_offset
        for b in batches:
            state = RecordState(b.delivery_state)
            if state is RecordState.ACQUIRED:
                state = RecordState.AVAILABLE
            for offset in range(max(b.first_offset, start_offset), b.last_offset + 1):
                self.records[offset] = InFlight(state, b.delivery_count)
        self.delivery_complete = sum(1 for r in self.records.values() if r.state.terminal)
        self._advance_start()

    def reset(self, start_offset: int) -> None:
        """AlterShareGroupOffsets / re-initialization: forget every record, start at `start_offset`."""
        self.restore(start_offset, ())

    def cancel_locks(self) -> None:
        for record in self.records.values():
            if record.lock is not None:
                record.lock.cancel()
                record.lock = None

    # -- acquisition ---------------------------------------------------------------------------

    def available(self, limit: int) -> list[int]:
        """Up to `limit` AVAILABLE offsets below `next_offset`, lowest first."""
        out: list[int] = []
        if limit <= 0:
            return out
        for offset in sorted(o for o, r in self.records.items() if r.state is RecordState.AVAILABLE):
            out.append(offset)
            if len(out) >= limit:
                break
        return out

    def window_room(self) -> int:
        """How many new offsets may still be handed out before the in-flight window is full."""
        return self.limits.max_record_locks - (self.next_offset - self.start_offset)

    def acquire(
        self, member_id: str, offsets: Sequence[int], lock_ms: int | None = None
    ) -> list[AcquiredRange]:
        """Give `offsets` (AVAILABLE ones, or new ones from `next_offset` on) to a member under one lock."""
        taken: list[int] = []
        chosen: set[int] = set()
        if offsets:
            self.next_offset = max(self.next_offset, max(offsets) + 1)
        for offset in offsets:
            record = self.records.get(offset)
            if record is None:
                if offset < self.start_offset:
                    continue
                record = self.records[offset] = InFlight(RecordState.AVAILABLE)
            elif record.state is not RecordState.AVAILABLE or offset in chosen:
                continue
            chosen.add(offset)
            taken.append(offset)
        if not taken:
            return []
        lock = _Lock(self.limits.record_lock_duration_ms if lock_ms is None else lock_ms, self, taken)
        for offset in taken:
            record = self.records[offset]
            record.state = RecordState.ACQUIRED
            record.delivery_count += 1
            record.member_id = member_id
            record.lock = lock
        self.timer.add(lock)
        return _ranges([(o, self.records[o].delivery_count) for o in sorted(taken)])

    def skip(self, offsets: Sequence[int]) -> None:
        """New offsets no member is given (control records, aborted transactions): archived at once."""
        changed: list[int] = []
        for offset in offsets:
            if offset in self.records or offset < self.start_offset:
                continue
            self.records[offset] = InFlight(RecordState.ARCHIVED)
            self.delivery_complete += 1
            self.next_offset = max(self.next_offset, offset + 1)
            changed.append(offset)
        if changed:
            self._advance_start()
            self._write(changed)

    def passed(self, offset: int) -> None:
        """Nothing is below `offset` in the log (a log start offset that moved, or offsets never written)."""
        if offset <= self.start_offset:
            return
        for o in [o for o in self.records if o < offset]:
            record = self.records.pop(o)
            if record.lock is not None:
                self._unlock(o, record)
            if record.state.terminal:
                self.delivery_complete -= 1
        self.start_offset = offset
        self.next_offset = max(self.next_offset, offset)
        self._advance_start()
        self._write([])

    # -- acknowledgement -----------------------------------------------------------------------

    def acknowledge(
        self, member_id: str, batches: Sequence[tuple[int, int, Sequence[int]]], renew: bool = False
    ) -> ErrorCode:
        """Apply a member's acknowledgements, all or none: INVALID_REQUEST for a malformed batch,
        INVALID_RECORD_STATE when an offset is not acquired by this member."""
        plan: list[tuple[int, AckType]] = []
        seen: set[int] = set()
        for first, last, types in batches:
            if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
                return ErrorCode.INVALID_REQUEST
            for i, offset in enumerate(range(first, last + 1)):
                raw = types[0] if len(types) == 1 else types[i]
                if raw not in _ACK_TYPES or (raw == AckType.RENEW and not renew) or offset in seen:
                    return ErrorCode.INVALID_REQUEST
                seen.add(offset)
                record = self.records.get(offset)
                if (
                    record is None
                    or record.state is not RecordState.ACQUIRED
                    or record.member_id != member_id
                ):
                    return ErrorCode.INVALID_RECORD_STATE
                plan.append((offset, AckType(raw)))
        self._apply(member_id, plan)
        return ErrorCode.NONE

    def _apply(self, member_id: str, plan: list[tuple[int, AckType]]) -> None:
        changed: list[int] = []
        renewed: list[int] = []
        rejected: list[int] = []
        released = False
        for offset, ack in plan:
            record = self.records[offset]
            if ack is AckType.RENEW:
                renewed.append(offset)
                continue
            self._unlock(offset, record)
            if ack is AckType.ACCEPT:
                record.state = RecordState.ACKNOWLEDGED
                self.delivery_complete += 1
            elif ack is AckType.RELEASE:
                released |= self._release(record)
            else:
                record.state = RecordState.ARCHIVED
                self.delivery_complete += 1
                if ack is AckType.REJECT:  # not a GAP: no record there
                    rejected.append(offset)
            changed.append(offset)
        if renewed:
            for offset in renewed:
                self._unlock(offset, self.records[offset])
            self.acquire_again(member_id, renewed)
        if changed:
            self._archived(rejected, REJECTED)
            self._archived([o for o, a in plan if a is AckType.RELEASE], DELIVERY_COUNT_EXCEEDED)
            self._write(changed)
            self._advance_start()
        if released:
            self.on_release()

    def acquire_again(self, member_id: str, offsets: list[int]) -> None:
        """RENEW: the records stay the member's under a fresh lock (no new delivery)."""
        lock = _Lock(self.limits.record_lock_duration_ms, self, offsets)
        for offset in offsets:
            record = self.records[offset]
            record.member_id = member_id
            record.lock = lock
        self.timer.add(lock)

    def release_member(self, member_id: str) -> int:
        """The member's share session closed: its acquired records go back (as Kafka releases them)."""
        mine = [
            o for o, r in self.records.items() if r.state is RecordState.ACQUIRED and r.member_id == member_id
        ]
        released = False
        for offset in mine:
            record = self.records[offset]
            self._unlock(offset, record)
            released |= self._release(record)
        if mine:
            self._archived(mine, DELIVERY_COUNT_EXCEEDED)
            self._write(mine)
            self._advance_start()
        if released:
            self.on_release()
        return len(mine)

    # -- locks ---------------------------------------------------------------------------------

    def _lock_expired(self, lock: _Lock) -> None:
        expired = [o for o in lock.offsets if (r := self.records.get(o)) is not None and r.lock is lock]
        released = False
        for offset in expired:
            record = self.records[offset]
            record.lock = None
            record.member_id = None
            released |= self._release(record)
        if expired:
            self._archived(expired, DELIVERY_COUNT_EXCEEDED)
            self._write(expired)
            self._advance_start()
        if released:
            self.on_release()

    def _unlock(self, offset: int, record: InFlight) -> None:
        lock = record.lock
        record.lock = None
        record.member_id = None
        if isinstance(lock, _Lock):
            lock.held -= 1
            if lock.held <= 0:
                lock.cancel()

    def _release(self, record: InFlight) -> bool:
        """Back to AVAILABLE, or ARCHIVED once delivered `delivery.count.limit` times; True if available."""
        if record.delivery_count >= self.limits.delivery_count_limit:
            record.state = RecordState.ARCHIVED
            self.delivery_complete += 1
            return False
        record.state = RecordState.AVAILABLE
        return True

    def _archived(self, offsets: list[int], why: str) -> None:
        """Tell `on_archive` which of `offsets` this change archived, before the change is written."""
        records = self.records
        archived = [(o, r.delivery_count) for o in offsets if (r := records[o]).state is RecordState.ARCHIVED]
        if archived:
            self.on_archive(archived, why)

    # -- start offset and state writes ---------------------------------------------------------

    def _advance_start(self) -> None:
        start = self.start_offset
        records = self.records
        while True:
            record = records.get(start)
            if record is None:
                if start >= self.next_offset:
                    break
                start += 1  # below next_offset and untracked: the log holds no record there (a gap)
                continue
            if not record.state.terminal:
                break
            del records[start]
            self.delivery_complete -= 1
            start += 1
        self.start_offset = start
        self.next_offset = max(self.next_offset, start)

    def _write(self, changed: list[int]) -> None:
        items = [
            (o, _persisted(r), r.delivery_count)
            for o in sorted(set(changed))
            if o >= self.start_offset and (r := self.records.get(o)) is not None
        ]
        self.on_write(self.start_offset, self.delivery_complete, runs(items))

    def state_batches(self) -> list[StateBatch]:
        """Every tracked record as Kafka persists it (acquired ones as AVAILABLE), for a snapshot."""
        items = [(o, _persisted(r), r.delivery_count) for o, r in sorted(self.records.items())]
        return runs(items)

    def in_flight(self) -> int:
        return self.next_offset - self.start_offset


def _persisted(record: InFlight) -> int:
    """Kafka persists no ACQUIRED state: an acquired record is written as AVAILABLE."""
    return int(RecordState.AVAILABLE if record.state is RecordState.ACQUIRED else record.state)


def _ranges(items: list[tuple[int, int]]) -> list[AcquiredRange]:
    out: list[AcquiredRange] = []
    for offset, count in items:
        if out and out[-1].last_offset + 1 == offset and out[-1].delivery_count == count:
            out[-1] = out[-1]._replace(last_offset=offset)
        else:
            out.append(AcquiredRange(offset, offset, count))
    return out
