"""State machine over one partition log: two transactional producers and a plain one interleave
batches, commits, aborts, segment rolls, truncations and restarts (clean or not). Invariants: the LSO
is the first offset of the earliest open transaction (never past one), read_committed sees exactly
the committed and plain records below it, the aborted index names exactly the aborted transactions
with records, and a producer's epoch never goes back."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from kafka.record.memory_records import MemoryRecords

from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import Rec, batch

TS = 2**41
PIDS = (1, 2)


@dataclass
class Model:
    """The expected partition: (offset, value, producer or None, state) of each record and marker."""

    next_offset: int = 0
    open_first: dict[int, int] = field(default_factory=dict)
    seq: dict[int, int] = field(default_factory=lambda: dict.fromkeys(PIDS, 0))
    records: list[tuple[int, bytes, int | None]] = field(default_factory=list)
    outcome: dict[tuple[int, int], bool] = field(default_factory=dict)  # (pid, first) -> committed
    aborted: list[tuple[int, int]] = field(default_factory=list)
    markers: list[int] = field(default_factory=list)

    @property
    def lso(self) -> int:
        return min(self.open_first.values(), default=self.next_offset)

    def txn_of(self, offset: int, pid: int) -> tuple[int, int] | None:
        starts = [first for p, first in self.outcome if p == pid and first <= offset]
        opened = self.open_first.get(pid)
        if opened is not None and opened <= offset:
            return None  # still open
        return (pid, max(starts)) if starts else None

    def visible(self) -> list[bytes]:
        out = []
        for offset, value, pid in self.records:
            if offset >= self.lso:
                break
            if pid is None or self.outcome.get(self.txn_of(offset, pid) or (0, -1), False):
                out.append(value)
        return out


def committed_view(plog: PartitionLog) -> list[bytes]:
    """Records a read_committed consumer keeps, using only what Fetch gives it: batches below the LSO
    and the aborted list."""
    lso = plog.last_stable_offset
    aborted = {pid: [] for pid in PIDS} | {}
    for pid, first in plog.aborted_transactions(0, lso):
        aborted.setdefault(pid, []).append(first)
    out: list[bytes] = []
    in_aborted: set[int] = set()
    for header in plog.batch_headers():
        if header.base_offset >= lso:
            break
        pid = header.producer_id
        if header.is_control:
            in_aborted.discard(pid)
            continue
        if header.is_transactional and header.base_offset in aborted.get(pid, []):
            in_aborted.add(pid)
        if pid in in_aborted:
            continue
        out += [r.value for r in MemoryRecords(plog.read(header.base_offset, 1)).next_batch()]
    return out


class TransactionalLog(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="txnprop"))
        self.config = LogConfig(segment_bytes=700)
        self.plog = PartitionLog(self.dir, self.config, time_ms=lambda: TS)
        self.model = Model()
        self.epochs: dict[int, int] = {}

    def teardown(self) -> None:
        self.plog.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _append(self, pid: int | None, n: int) -> None:
        m = self.model
        values = [b"%s:%d" % (str(pid).encode(), m.next_offset + i) for i in range(n)]
        recs = [Rec(None, v, TS) for v in values]
        if pid is None:
            raw = batch(recs)
        else:
            raw = batch(recs, producer_id=pid, epoch=0, sequence=m.seq[pid], transactional=True)
            m.seq[pid] += n
            m.open_first.setdefault(pid, m.next_offset)
        assert self.plog.append(raw).base_offset == m.next_offset
        m.records += [(m.next_offset + i, v, pid) for i, v in enumerate(values)]
        m.next_offset += n

    @rule(pid=st.sampled_from(PIDS), n=st.integers(1, 3))
    def send(self, pid: int, n: int) -> None:
        self._append(pid, n)

    @rule(n=st.integers(1, 2))
    def plain(self, n: int) -> None:
        self._append(None, n)

    @rule(pid=st.sampled_from(PIDS), commit=st.booleans())
    def end(self, pid: int, commit: bool) -> None:
        m = self.model
        assert self.plog.append_marker(pid, 0, commit) == m.next_offset
        first = m.open_first.pop(pid, None)
        if first is not None:
            m.outcome[(pid, first)] = commit
            if not commit:
                m.aborted.append((pid, first))
        m.markers.append(m.next_offset)
        m.next_offset += 1

    @rule()
    def roll(self) -> None:
        self.plog.roll()

    @rule(clean=st.booleans())
    def restart(self, clean: bool) -> None:
        if clean:
            self.plog.close()
        self.plog = PartitionLog(self.dir, self.config, time_ms=lambda: TS)

    @invariant()
    def the_lso_is_the_earliest_open_transaction(self) -> None:
        assert self.plog.last_stable_offset == self.model.lso
        assert self.plog.producers.ongoing() == self.model.open_first

    @invariant()
    def read_committed_sees_exactly_the_committed_records(self) -> None:
        assert committed_view(self.plog) == self.model.visible()

    @invariant()
    def the_aborted_index_names_the_aborted_transactions(self) -> None:
        assert self.plog.aborted_transactions(0, self.model.next_offset + 1) == self.model.aborted

    @invariant()
    def epochs_never_go_back(self) -> None:
        for s in self.plog.producer_snapshot():
            assert s.producer_epoch >= self.epochs.get(s.producer_id, -1)
            self.epochs[s.producer_id] = s.producer_epoch


TransactionalLog.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
test_transactional_log = TransactionalLog.TestCase
