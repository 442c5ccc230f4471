"""A restart rebuilds the same offsets when the reload reads most batches through cached layouts.

The other restart tests commit one partition at a time, so their batches hold one record and the
reload parses them record by record. Here groups commit several partitions at once, again and
again, with metadata of a few lengths (batches of the same size with another framing), delete
offsets (tombstones), commit inside transactions and end them (the fast path stops while one is
open), and a compaction pass rewrites some batches with gaps in their offsets. The reloaded
coordinator must serve what the live one served, and the reload must have used layouts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition
from kafkito.broker.log import cleaner
from kafkito.broker.offsets import OFFSETS_TOPIC, latest_values
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import OffsetsHarness

PARTITIONS = 2
GROUPS = ("g0", "g1", "g2")
TPS = tuple(TopicPartition(t, p) for t in ("a", "bb") for p in range(4))
METADATA = ("", "m", "mm", "meta")
PRODUCERS = (7, 8)

commits = st.tuples(
    st.just("commit"),
    st.sampled_from(GROUPS),
    st.lists(st.sampled_from(TPS), min_size=2, max_size=len(TPS), unique=True),
    st.integers(0, 300),
    st.sampled_from(METADATA),
    st.integers(0, len(TPS)),
)
repeats = st.tuples(st.just("repeat"), st.integers(1, 6))
actions = st.one_of(
    commits,
    commits,
    commits,
    repeats,
    repeats,
    st.tuples(st.just("delete"), st.sampled_from(GROUPS), st.sampled_from(TPS)),
    st.tuples(st.just("txn"), st.sampled_from(PRODUCERS), st.sampled_from(GROUPS), st.integers(0, 300)),
    st.tuples(st.just("end"), st.sampled_from(PRODUCERS), st.booleans()),
    st.tuples(st.just("end"), st.sampled_from(PRODUCERS), st.booleans()),
    st.tuples(st.just("compact")),
)


def served(o: OffsetsHarness) -> dict[str, Any]:
    """Every group's committed and pending offsets."""
    out: dict[str, Any] = {}
    for group in GROUPS:
        g = o.coordinator.get_group(group)
        offsets = {} if g is None else g.offsets
        out[group] = {
            tp: (om.offset, om.metadata, om.leader_epoch, om.commit_timestamp_ms)
            for tp, om in offsets.items()
        }
        out[f"pending:{group}"] = {
            pid: {tp: (om.offset, om.metadata) for tp, om in p.items()}
            for pid, p in o.coordinator.pending_transactional_offsets(group).items()
        }
    return out


def apply(o: OffsetsHarness, action: tuple[Any, ...], last: list[tuple[Any, ...]]) -> None:
    kind, *args = action
    if kind == "repeat" and last:
        for i in range(args[0]):  # the same shape again: the layout's case
            group, tps, offset, metadata, epoch_at = last[-1][1:]
            apply(o, ("commit", group, tps, offset + i + 1, metadata, epoch_at), [])
    elif kind == "commit":
        group, tps, offset, metadata, epoch_at = args
        last.append(action)
        offsets = {
            tp: OffsetAndMetadata(offset + i, metadata if i % 2 else "", 3 if i == epoch_at else -1)
            for i, tp in enumerate(tps)
        }
        assert set(o.h.commit(group, offsets).result.values()) == {ErrorCode.NONE}
        o.h.clock.advance(1)
    elif kind == "delete" and o.coordinator.get_group(args[0]) is not None:
        o.coordinator.delete_offsets(args[0], [args[1]])
    elif kind == "txn":
        pid, group, offset = args
        reply = o.h.txn_commit(group, {TPS[0]: offset, TPS[1]: offset}, producer_id=pid)
        assert set(reply.result.values()) == {ErrorCode.NONE}
    elif kind == "end":
        pid, commit = args
        for partition in range(PARTITIONS):
            assert o.h.end_txn(pid, commit, partition=partition).result is ErrorCode.NONE
    elif kind == "compact":
        for p in range(PARTITIONS):
            plog = o.logs.get_log(OFFSETS_TOPIC, p)
            plog.roll()
            cleaner.compact(plog, o.wall(), force=True)


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(history=st.lists(actions, min_size=5, max_size=40))
def test_a_reload_through_layouts_rebuilds_what_was_served(history: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        o = OffsetsHarness(Path(tmp), partitions=PARTITIONS)
        try:
            last: list[tuple[Any, ...]] = []
            for action in history:
                apply(o, action, last)
            before = served(o)
            o = o.restart()
            assert served(o) == before
        finally:
            o.close()


def test_the_reload_reads_repeated_commits_through_layouts(tmp_path: Path, monkeypatch: Any) -> None:
    built: list[int] = []
    layout_of = latest_values._layout_of

    def counting(batch: bytes, count: int) -> Any:
        built.append(count)
        return layout_of(batch, count)

    monkeypatch.setattr(latest_values, "_layout_of", counting)
    o = OffsetsHarness(tmp_path / "data", partitions=PARTITIONS)
    try:
        last: list[tuple[Any, ...]] = []
        apply(o, ("commit", "g0", list(TPS), 10, "m", 0), last)
        apply(o, ("repeat", 6), last)
        before = served(o)
        folded: list[int] = []
        fold = latest_values.fold_records

        def counted(batch: bytes, count: int, latest: dict[bytes, bytes | None]) -> None:
            folded.append(count)
            fold(batch, count, latest)

        monkeypatch.setattr(latest_values, "fold_records", counted)
        o = o.restart()
        assert served(o) == before
        # 7 batches of one shape: the first two parsed record by record, the next five by the layout
        assert built == [len(TPS)] and folded == [len(TPS)] * 2
    finally:
        o.close()
