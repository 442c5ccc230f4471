"""A hypothesis state machine over one share partition: members acquire, acknowledge (accept, release,
reject), acknowledge records they do not hold, leave; locks expire; retention deletes the oldest
records; the broker restarts from what was persisted. Invariants: a record is held by at most one
member; an accepted record is never delivered again, also after a restart; delivery counts never go
down; the delivery-complete count (the share partition's and the persisted one) is the number of
terminal records at or past the start offset; at the end every record is delivered to completion
(accepted, archived, or deleted by retention) exactly once."""

from __future__ import annotations

import uuid

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkito.broker.share.partition import ShareLimits, SharePartition
from kafkito.broker.share.state_log import PersistedState
from kafkito.broker.share.states import RecordState, StateBatch
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

LOG_END = 40
LOCK_MS = 1000
LIMIT = 3
MEMBERS = st.sampled_from(["m1", "m2", "m3"])


class SharePartitionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.persisted = PersistedState(0, delivery_complete=0)  # as initialized
        self.sp = self._build()
        self.held: dict[int, str] = {}  # offset -> member, as the members believe
        self.accepted: set[int] = set()
        self.counts: dict[int, int] = {}

    def _build(self) -> SharePartition:
        timer = Timer(self.clock)
        limits = ShareLimits(LOCK_MS, LIMIT, 25)
        sp = SharePartition(
            ("g", uuid.UUID(int=1), 0), self.persisted.start_offset, timer, limits, self._write
        )
        sp.restore(self.persisted.start_offset, self.persisted.batches())
        return sp

    def _write(self, start: int, complete: int, batches: list[StateBatch]) -> None:
        self.persisted.merge(start, batches, complete)

    def _owned(self, member: str) -> list[int]:
        return sorted(
            o for o, r in self.sp.records.items() if r.state is RecordState.ACQUIRED and r.member_id == member
        )

    @rule(member=MEMBERS, n=st.integers(1, 8))
    def acquire(self, member: str, n: int) -> None:
        offsets = self.sp.available(n)
        room = min(n - len(offsets), self.sp.window_room())
        if room > 0:
            offsets += list(range(self.sp.next_offset, min(LOG_END, self.sp.next_offset + room)))
        for first, last, count in self.sp.acquire(member, offsets):
            for offset in range(first, last + 1):
                assert offset not in self.accepted, f"accepted offset {offset} delivered again"
                holder = self.sp.records[offset].member_id
                assert holder == member
                assert count >= self.counts.get(offset, 0), "a delivery count went down"
                assert count <= LIMIT
                self.counts[offset] = count
                self.held[offset] = member

    @rule(member=MEMBERS, kind=st.sampled_from([1, 2, 3]), data=st.data())
    def acknowledge(self, member: str, kind: int, data: st.DataObject) -> None:
        owned = self._owned(member)
        if not owned:
            return
        chosen = data.draw(st.lists(st.sampled_from(owned), min_size=1, max_size=len(owned), unique=True))
        batches = [(o, o, (kind,)) for o in sorted(chosen)]
        assert self.sp.acknowledge(member, batches) is ErrorCode.NONE
        if kind == 1:
            self.accepted.update(chosen)

    @rule(member=MEMBERS, other=MEMBERS)
    def acknowledge_what_another_holds(self, member: str, other: str) -> None:
        owned = self._owned(other)
        if member == other or not owned:
            return
        assert self.sp.acknowledge(member, [(owned[0], owned[0], (1,))]) is ErrorCode.INVALID_RECORD_STATE

    @rule(ms=st.integers(1, 2 * LOCK_MS))
    def time_passes(self, ms: int) -> None:
        self.clock.advance(ms)

    @rule(member=MEMBERS)
    def member_leaves(self, member: str) -> None:
        self.sp.release_member(member)

    @rule(by=st.integers(1, 3))
    def retention_deletes_the_oldest(self, by: int) -> None:
        self.sp.passed(min(self.sp.start_offset + by, self.sp.next_offset))

    @rule()
    def restart(self) -> None:
        self.sp.cancel_locks()
        self.sp = self._build()

    @invariant()
    def records_are_held_by_one_member_at_most(self) -> None:
        for offset, record in self.sp.records.items():
            assert (record.state is RecordState.ACQUIRED) == (record.member_id is not None), offset
            assert offset >= self.sp.start_offset
            assert offset not in self.accepted or record.state is not RecordState.AVAILABLE

    @invariant()
    def accepted_records_stay_accepted(self) -> None:
        for offset in self.accepted:
            record = self.sp.records.get(offset)
            assert offset < self.sp.start_offset or (
                record is not None and record.state is RecordState.ACKNOWLEDGED
            )

    @invariant()
    def delivery_complete_counts_the_terminal_records_at_or_past_the_start(self) -> None:
        terminal = {RecordState.ACKNOWLEDGED, RecordState.ARCHIVED}
        assert self.sp.delivery_complete == sum(1 for r in self.sp.records.values() if r.state in terminal)
        persisted = self.persisted
        assert persisted.delivery_complete == sum(1 for s, _ in persisted.states.values() if s in terminal)

    def teardown(self) -> None:
        # Drain: one member takes and accepts everything left; then every record is complete.
        for _ in range(LOG_END * (LIMIT + 1)):
            if self.sp.start_offset >= LOG_END:
                break
            self.clock.advance(LOCK_MS)
            self.acquire("drain", 8)
            owned = self._owned("drain")
            if owned:
                assert self.sp.acknowledge("drain", [(o, o, (1,)) for o in owned]) is ErrorCode.NONE
                self.accepted.update(owned)
        assert self.sp.start_offset == LOG_END
        assert self.sp.records == {}


TestSharePartitionMachine = SharePartitionMachine.TestCase
TestSharePartitionMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
