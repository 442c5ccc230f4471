"""Reloading `__consumer_offsets`: answers while loading, partition by partition, in bounded chunks."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

from crc32c import crc32c

from kafkito.broker.coordinator import GroupState, LeavingMember, TopicPartition
from kafkito.broker.log import cleaner
from kafkito.broker.offsets import OFFSETS_TOPIC, partition_for
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.records import (
    OffsetValue,
    encode_group_key,
    encode_offset_key,
    encode_offset_value,
)
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness

T0 = TopicPartition("t", 0)


def committed(o: OffsetsHarness) -> dict[str, dict[TopicPartition, int]]:
    return {g.group_id: {tp: om.offset for tp, om in g.offsets.items()} for g in o.coordinator.groups()}


LOADING = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def group_in(partition: int, partitions: int = 5, prefix: str = "g") -> str:
    return next(
        f"{prefix}{i}" for i in range(10_000) if partition_for(f"{prefix}{i}", partitions) == partition
    )


class Deferred:
    """Stands in for `loop.call_soon`: runs queued loading steps only when pumped."""

    def __init__(self) -> None:
        self.queue: list[Callable[[], None]] = []
        self.steps = 0

    def __call__(self, fn: Callable[[], None]) -> None:
        self.queue.append(fn)

    def pump(self, n: int = 1) -> None:
        for _ in range(n):
            if self.queue:
                self.steps += 1
                self.queue.pop(0)()

    def drain(self) -> int:
        while self.queue:
            self.pump()
        return self.steps


def reloading(o: OffsetsHarness, **overrides: object) -> tuple[OffsetsHarness, Deferred]:
    o.close()
    r = o.restart(crash=True, load=False, **overrides)  # type: ignore[arg-type]
    deferred = Deferred()
    r.manager.load(r.coordinator, deferred)
    return r, deferred


def test_while_loading_heartbeat_is_none_sync_rebalance_in_progress_others_load_in_progress(
    tmp_path: Path,
) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    o.h.commit("g", {T0: 5}, member_id=leader, generation=1)
    r, deferred = reloading(o)
    h = r.h
    assert h.heartbeat("g", follower, 1) is ErrorCode.NONE
    assert h.sync("g", follower, 1).result.error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.join("g", member_id=leader).result.error is LOADING
    assert h.leave("g", LeavingMember(follower)).error is LOADING
    assert h.commit("g", {T0: 6}, member_id=leader, generation=1).result == {T0: LOADING}
    assert r.coordinator.fetch_offsets("g", [T0]) == (LOADING, {})
    assert r.coordinator.describe_groups(["g"])[0].error is LOADING
    assert r.coordinator.delete_groups(["g"]) == {"g": LOADING}
    assert r.coordinator.delete_offsets("g", [T0]) == (LOADING, {})
    assert r.coordinator.list_groups()[0] is LOADING
    deferred.drain()
    assert r.manager.loaded
    assert r.coordinator.list_groups()[0] is ErrorCode.NONE
    assert r.coordinator.fetch_offsets("g", [T0])[1][T0].offset == 5
    assert h.heartbeat("g", follower, 1) is ErrorCode.NONE
    assert h.state() is GroupState.STABLE


def test_partitions_load_one_by_one_and_are_served_as_soon_as_loaded(tmp_path: Path) -> None:
    first, last = group_in(0), group_in(4)
    o = OffsetsHarness(tmp_path)
    o.h.commit(first, {T0: 1})
    o.h.commit(last, {T0: 2})
    r, deferred = reloading(o)
    while r.manager.sink.is_loading(first):
        deferred.pump()
    assert r.manager.sink.is_loading(last)
    assert r.coordinator.fetch_offsets(first, [T0])[1][T0].offset == 1
    assert r.coordinator.fetch_offsets(last, [T0]) == (LOADING, {})
    deferred.drain()
    assert r.coordinator.fetch_offsets(last, [T0])[1][T0].offset == 2


def test_loading_runs_in_bounded_chunks(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    for i in range(1_000):
        o.h.commit(f"g{i % 50}", {T0: i})
    r, deferred = reloading(o, chunk=100)
    steps = deferred.drain()
    # 1000 records in chunks of 100, then 50 keys decoded and 50 groups installed (10 per step).
    assert steps >= 10 + 5
    assert r.coordinator.fetch_offsets("g7", [T0])[1][T0].offset == 957


def test_a_small_log_loads_at_once(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.commit("g", {T0: 3})
    r, deferred = reloading(o, inline_bytes=1 << 20)
    assert r.manager.loaded and deferred.queue == []
    assert r.coordinator.fetch_offsets("g", [T0])[1][T0].offset == 3


def test_transactional_offsets_apply_only_at_a_commit_marker(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)

    def txn_batch(records: list[tuple[bytes, bytes | None]], pid: int, seq: int) -> bytes:
        buf = build_batch(records, WALL_EPOCH)
        struct.pack_into(">h", buf, 21, 0x10)  # transactional
        struct.pack_into(">qhi", buf, 43, pid, 0, seq)
        struct.pack_into(">I", buf, 17, crc32c(bytes(buf[21:])))
        return bytes(buf)

    def commit_value(offset: int) -> bytes:
        return encode_offset_value(OffsetValue(offset, "", WALL_EPOCH))

    plog.append(txn_batch([(encode_offset_key("committed", "t", 0), commit_value(11))], 7, 0))
    plog.append(txn_batch([(encode_offset_key("aborted", "t", 0), commit_value(22))], 8, 0))
    plog.append(txn_batch([(encode_offset_key("open", "t", 0), commit_value(33))], 9, 0))
    plog.append_marker(7, 0, True)
    plog.append_marker(8, 0, False)
    r = o.restart()
    fetch = r.coordinator.fetch_offsets
    assert fetch("committed", [T0])[1][T0].offset == 11
    assert fetch("aborted", [T0])[1][T0].offset == -1
    assert fetch("open", [T0])[1][T0].offset == -1
    # Still open at the end of the log: pending, for the transaction coordinator to complete.
    assert fetch("open", [T0], require_stable=True)[1][T0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT
    pending = r.coordinator.pending_transactional_offsets("open")
    assert {pid: {tp: o.offset for tp, o in p.items()} for pid, p in pending.items()} == {9: {T0: 33}}


def test_unknown_and_undecodable_records_are_skipped(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    plog.append(build_batch([(b"\x00\x63future-key", b"\x00\x00whatever")], WALL_EPOCH))
    plog.append(build_batch([(encode_offset_key("bad", "t", 0), b"\x00\x03short")], WALL_EPOCH))
    plog.append(build_batch([(encode_group_key("bad2"), b"\x00\x09???")], WALL_EPOCH))
    o.h.commit("good", {T0: 4})
    r = o.restart()
    assert r.manager.loaded
    assert r.coordinator.fetch_offsets("good", [T0])[1][T0].offset == 4
    assert r.coordinator.get_group("bad") is None and r.coordinator.get_group("bad2") is None


def test_compaction_keeps_the_last_record_per_key_and_reload_sees_the_same_state(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1, log_props={"log.cleaner.delete.retention.ms": 60_000})
    for i in range(300):
        o.h.commit(f"g{i % 10}", {TopicPartition("t", i % 3): i})
    o.h.commit("gone", {T0: 1})
    assert o.coordinator.delete_groups(["gone"]) == {"gone": ErrorCode.NONE}
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    before = committed(o)
    plog.roll()
    plan = cleaner.compact(plog, o.wall(), force=True)
    assert plan is not None and plan.records_before == 302
    assert plan.records_after == 30 + 1  # the live keys, and the tombstone (still within retention)
    r = o.restart()
    assert committed(r) == before
    # Past delete.retention.ms the tombstone goes too.
    plog = r.logs.get_log(OFFSETS_TOPIC, 0)
    plog.roll()
    r.h.advance(60_001)
    plan = cleaner.compact(plog, r.wall(), force=True)
    assert plan is not None and plan.records_after == 30
    assert committed(r.restart()) == before
