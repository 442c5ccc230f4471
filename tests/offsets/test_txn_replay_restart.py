"""Transactional and plain offset commits, markers, deletions and restarts, against a model of Kafka's rules.

The model is Kafka's OffsetMetadataManager reduced to its data: committed offsets and each
producer's pending offsets, every record carrying its position in the log. A marker on a partition
ends the producer's pending offsets of that partition's groups; a commit keeps, per partition, the
record latest in the log; an offset tombstone drops the committed and the pending offsets. The
coordinator writes to a real `__consumer_offsets` log and restarts on it at random points: after
each step, and after each restart, what it serves equals the model.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import OffsetsHarness

PARTITIONS = 2  # of __consumer_offsets
GROUPS = ("a", "b", "c")
PRODUCERS = (1, 2, 3)
TPS = (TopicPartition("t", 0), TopicPartition("t", 1))

Entry = tuple[int, int]  # (offset committed, position of its record in the log)


@dataclass
class Model:
    committed: dict[tuple[str, TopicPartition], Entry] = field(default_factory=dict)
    pending: dict[int, dict[tuple[str, TopicPartition], Entry]] = field(default_factory=dict)
    position: int = 0

    def next(self) -> int:
        self.position += 1
        return self.position

    def commit(self, group: str, tp: TopicPartition, offset: int) -> None:
        self.committed[group, tp] = (offset, self.next())

    def txn_commit(self, pid: int, group: str, tp: TopicPartition, offset: int) -> None:
        self.pending.setdefault(pid, {})[group, tp] = (offset, self.next())

    def end(self, pid: int, commit: bool, on_partition: Any) -> None:
        records = self.pending.get(pid, {})
        for key in [k for k in records if on_partition(k[0])]:
            offset, position = records.pop(key)
            if commit and (key not in self.committed or position > self.committed[key][1]):
                self.committed[key] = (offset, position)

    def delete(self, group: str, tp: TopicPartition) -> None:
        self.committed.pop((group, tp), None)
        for records in self.pending.values():
            records.pop((group, tp), None)

    def served(self) -> dict[str, Any]:
        return {
            "committed": {k: v[0] for k, v in self.committed.items()},
            "pending": {pid: {k: v[0] for k, v in r.items()} for pid, r in self.pending.items() if r},
        }


def served(o: OffsetsHarness) -> dict[str, Any]:
    committed: dict[tuple[str, TopicPartition], int] = {}
    pending: dict[int, dict[tuple[str, TopicPartition], int]] = {}
    for group in GROUPS:
        _, offsets = o.coordinator.fetch_offsets(group, list(TPS))
        committed.update({(group, tp): p.offset for tp, p in offsets.items() if p.offset >= 0})
        _, stable = o.coordinator.fetch_offsets(group, list(TPS), require_stable=True)
        in_txn = o.coordinator.pending_transactional_offsets(group)
        for pid, records in in_txn.items():
            for tp, om in records.items():
                pending.setdefault(pid, {})[group, tp] = om.offset
        unstable = {tp for tp, p in stable.items() if p.error is ErrorCode.UNSTABLE_OFFSET_COMMIT}
        assert unstable == {tp for records in in_txn.values() for tp in records}
    return {"committed": committed, "pending": pending}


actions = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(GROUPS), st.sampled_from(TPS), st.integers(0, 99)),
    st.tuples(
        st.just("txn"),
        st.sampled_from(PRODUCERS),
        st.sampled_from(GROUPS),
        st.sampled_from(TPS),
        st.integers(100, 199),
    ),
    st.tuples(st.just("end"), st.sampled_from(PRODUCERS), st.booleans(), st.sampled_from([None, 0, 1])),
    st.tuples(st.just("delete"), st.sampled_from(GROUPS), st.sampled_from(TPS)),
    st.tuples(st.just("restart")),
)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(history=st.lists(actions, max_size=30))
def test_transactional_offsets_follow_kafkas_rules_across_restarts(history: list[tuple[Any, ...]]) -> None:
    model = Model()
    with tempfile.TemporaryDirectory() as tmp:
        o = OffsetsHarness(Path(tmp), partitions=PARTITIONS)
        try:
            for action in history:
                o = step(o, model, action)
                assert served(o) == model.served(), action
            o = o.restart()
            assert served(o) == model.served()
        finally:
            o.close()


def step(o: OffsetsHarness, model: Model, action: tuple[Any, ...]) -> OffsetsHarness:
    kind, *args = action
    if kind == "commit":
        group, tp, offset = args
        assert o.h.commit(group, {tp: offset}).result == {tp: ErrorCode.NONE}
        model.commit(group, tp, offset)
    elif kind == "txn":
        pid, group, tp, offset = args
        assert o.h.txn_commit(group, {tp: OffsetAndMetadata(offset)}, producer_id=pid).result == {
            tp: ErrorCode.NONE
        }
        model.txn_commit(pid, group, tp, offset)
    elif kind == "end":
        pid, commit, only = args
        for partition in range(PARTITIONS) if only is None else (only,):
            assert o.h.end_txn(pid, commit, partition=partition).result is ErrorCode.NONE
            model.end(pid, commit, lambda g, p=partition: o.partition_of(g) == p)
    elif kind == "delete":
        group, tp = args
        if o.coordinator.get_group(group) is not None:
            o.coordinator.delete_offsets(group, [tp])
            model.delete(group, tp)
    else:
        o = o.restart()
    return o
