"""Transactional offsets (TxnOffsetCommit, markers, require_stable) in the sans-io coordinator.

The behaviour is Kafka 4's OffsetMetadataManager: offsets stay pending per producer until the
producer's marker on the group's partition; a commit materializes them unless a more recent commit
of the partition is in the log; an abort drops them. Deletion and expiry keep Kafka's rules.
"""

from __future__ import annotations

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupCoordinator,
    GroupState,
    InMemoryRecordSink,
    OffsetAndMetadata,
    TopicPartition,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Harness

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
NONE = ErrorCode.NONE
UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT


def offset(h: Harness, group: str, tp: TopicPartition = T0) -> int:
    return h.coordinator.fetch_offsets(group, [tp])[1][tp].offset


def stable_error(h: Harness, group: str, tp: TopicPartition = T0) -> ErrorCode:
    return h.coordinator.fetch_offsets(group, [tp], require_stable=True)[1][tp].error


def pending(h: Harness, group: str) -> dict[int, dict[TopicPartition, int]]:
    raw = h.coordinator.pending_transactional_offsets(group)
    return {pid: {tp: o.offset for tp, o in p.items()} for pid, p in raw.items()}


def test_offsets_stay_pending_until_the_commit_marker() -> None:
    h = Harness()
    h.commit("g", {T0: 5})
    assert h.txn_commit("g", {T0: 10, T1: 11}).result == {T0: NONE, T1: NONE}
    written = [r for r in h.sink.records if isinstance(r, TxnOffsetCommitRecord)]
    assert {(r.partition, r.offset.offset, r.producer_id) for r in written} == {
        (T0, 10, 1000),
        (T1, 11, 1000),
    }
    assert offset(h, "g") == 5 and offset(h, "g", T1) == -1
    assert stable_error(h, "g") is UNSTABLE and stable_error(h, "g", T1) is UNSTABLE
    assert h.coordinator.fetch_offsets("g", None, require_stable=True)[1][T0].error is UNSTABLE
    assert pending(h, "g") == {1000: {T0: 10, T1: 11}}

    assert h.end_txn(commit=True).result is NONE
    assert h.sink.records[-1] == TransactionMarker(0, 1000, 0, True)
    assert offset(h, "g") == 10 and offset(h, "g", T1) == 11
    assert stable_error(h, "g") is NONE
    assert pending(h, "g") == {}


def test_an_abort_drops_the_pending_offsets() -> None:
    h = Harness()
    h.commit("g", {T0: 5})
    h.txn_commit("g", {T0: 10})
    assert h.end_txn(commit=False).result is NONE
    assert offset(h, "g") == 5 and stable_error(h, "g") is NONE
    assert pending(h, "g") == {}
    # A later marker for the same producer changes nothing.
    assert h.end_txn(commit=True).result is NONE
    assert offset(h, "g") == 5


def test_the_most_recent_commit_in_the_log_wins() -> None:
    h = Harness()
    h.txn_commit("g", {T0: 10, T1: 11})
    h.commit("g", {T0: 7})  # written after the transactional one: it stays
    h.end_txn(commit=True)
    assert offset(h, "g") == 7 and offset(h, "g", T1) == 11

    h.commit("g", {T0: 20})
    h.txn_commit("g", {T0: 30})  # written after the plain one: it wins at the marker
    h.end_txn(commit=True)
    assert offset(h, "g") == 30


def test_two_producers_on_one_partition_keep_log_order() -> None:
    h = Harness()
    h.txn_commit("g", {T0: 1}, producer_id=1)
    h.txn_commit("g", {T0: 2}, producer_id=2)
    h.end_txn(2, commit=True)
    assert offset(h, "g") == 2 and stable_error(h, "g") is UNSTABLE  # producer 1 still pending
    h.end_txn(1, commit=True)  # older than producer 2's record: skipped
    assert offset(h, "g") == 2 and stable_error(h, "g") is NONE


def test_a_marker_ends_the_transaction_only_on_its_own_partition() -> None:
    h = Harness(sink=InMemoryRecordSink(partitioner=lambda g: 1 if g == "other" else 0))
    h.txn_commit("g", {T0: 1})
    h.txn_commit("other", {T0: 2})
    assert h.coordinator.offsets_partition_for("other") == 1
    h.end_txn(commit=True, partition=0)
    assert offset(h, "g") == 1 and offset(h, "other") == -1
    assert pending(h, "other") == {1000: {T0: 2}}
    h.end_txn(commit=True, partition=1)
    assert offset(h, "other") == 2


def test_an_unknown_group_is_created_empty_for_a_commit_from_outside_it() -> None:
    h = Harness()
    assert h.txn_commit("new", {T0: 3}).result == {T0: NONE}
    assert h.state("new") is GroupState.EMPTY
    assert h.txn_commit("ghost", {T0: 3}, member_id="m", generation=1).result == {
        T0: ErrorCode.ILLEGAL_GENERATION
    }
    assert h.coordinator.get_group("ghost") is None


def test_members_are_checked_when_named() -> None:
    h = Harness()
    leader, _ = h.stable_group(2, "g")
    generation = h.generation("g")
    ok = h.txn_commit("g", {T0: 1}, member_id=leader, generation=generation)
    assert ok.result == {T0: NONE}
    unknown = h.txn_commit("g", {T0: 1}, member_id="nobody", generation=generation)
    assert unknown.result == {T0: ErrorCode.UNKNOWN_MEMBER_ID}
    stale = h.txn_commit("g", {T0: 1}, member_id=leader, generation=generation - 1)
    assert stale.result == {T0: ErrorCode.ILLEGAL_GENERATION}
    # Before v3 no member is named: a Stable group takes the commit (Kafka's transactional rule).
    assert h.txn_commit("g", {T0: 1}).result == {T0: NONE}


def test_a_fenced_static_member_is_refused() -> None:
    h = Harness()
    (member,) = h.stable_group(1, "g", instances=["i0"])
    generation = h.generation("g")
    fenced = h.txn_commit("g", {T0: 1}, member_id="old-id", generation=generation, instance="i0")
    assert fenced.result == {T0: ErrorCode.FENCED_INSTANCE_ID}
    ok = h.txn_commit("g", {T0: 1}, member_id=member, generation=generation, instance="i0")
    assert ok.result == {T0: NONE}


def test_oversized_metadata_is_refused_per_partition() -> None:
    h = Harness(config=CoordinatorConfig(offset_metadata_max_bytes=4))
    reply = h.txn_commit("g", {T0: OffsetAndMetadata(1, "toolong"), T1: OffsetAndMetadata(2, "ok")})
    assert reply.result == {T0: ErrorCode.OFFSET_METADATA_TOO_LARGE, T1: NONE}
    assert pending(h, "g") == {1000: {T1: 2}}
    assert h.txn_commit("g", {T0: OffsetAndMetadata(1, "toolong")}).result == {
        T0: ErrorCode.OFFSET_METADATA_TOO_LARGE
    }


def test_failed_appends_leave_nothing_pending_and_a_failed_marker_keeps_the_transaction() -> None:
    h = Harness()
    h.sink.fail_with = ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert h.txn_commit("g", {T0: 1}).result == {T0: ErrorCode.NOT_COORDINATOR}
    assert pending(h, "g") == {}
    h.sink.fail_with = NONE
    h.txn_commit("g", {T0: 2})
    h.sink.fail_with = ErrorCode.KAFKA_STORAGE_ERROR
    assert h.end_txn(commit=True).result is ErrorCode.KAFKA_STORAGE_ERROR
    assert pending(h, "g") == {1000: {T0: 2}} and offset(h, "g") == -1
    h.sink.fail_with = NONE
    assert h.end_txn(commit=True).result is NONE  # the transaction coordinator retries
    assert offset(h, "g") == 2


def test_answers_wait_for_the_append() -> None:
    h = Harness(sink=InMemoryRecordSink(defer_writes=True))
    reply = h.txn_commit("g", {T0: 1})
    assert not reply.done and stable_error(h, "g") is NONE  # not pending until written
    h.sink.complete_writes()
    assert reply.result == {T0: NONE} and stable_error(h, "g") is UNSTABLE
    marker = h.end_txn(commit=True)
    assert not marker.done and offset(h, "g") == -1
    h.sink.complete_writes()
    assert marker.result is NONE and offset(h, "g") == 1


def test_offset_delete_tombstones_pending_only_partitions() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    h.txn_commit("g", {T0: 2, T1: 3})
    error, results = h.coordinator.delete_offsets("g", [T0, T1])
    assert error is NONE and results == {T0: NONE, T1: NONE}
    assert h.sink.tombstones[-1] == ("g", (T0, T1), False)
    assert pending(h, "g") == {}
    h.end_txn(commit=True)
    assert offset(h, "g") == -1 and offset(h, "g", T1) == -1


def test_delete_groups_drops_the_pending_offsets() -> None:
    h = Harness()
    h.txn_commit("g", {T0: 2})
    assert h.coordinator.delete_groups(["g"]) == {"g": NONE}
    assert h.sink.tombstones[-1] == ("g", (T0,), False)
    h.end_txn(commit=True)
    assert h.coordinator.get_group("g") is None
    assert offset(h, "g") == -1


def test_expiry_spares_partitions_and_groups_in_open_transactions() -> None:
    h = Harness()
    h.commit("g", {T0: 1, T1: 1})
    h.txn_commit("g", {T0: 2})
    assert h.coordinator.expire_offsets("g", [T0, T1]) is False  # open transaction: the group stays
    assert offset(h, "g") == 1 and offset(h, "g", T1) == -1
    h.end_txn(commit=True)
    assert offset(h, "g") == 2
    assert h.coordinator.expire_offsets("g", [T0]) is True


def test_unloading_a_group_forgets_its_pending_offsets() -> None:
    h = Harness()
    h.txn_commit("g", {T0: 2})
    h.coordinator.unload_group("g")
    assert pending(h, "g") == {}
    h.end_txn(commit=True)
    assert h.coordinator.get_group("g") is None


def test_replaying_the_records_rebuilds_the_same_offsets() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    h.txn_commit("g", {T0: 2, T1: 2}, producer_id=1)
    h.commit("g", {T1: 9})
    h.txn_commit("g", {T0: 3}, producer_id=2)
    h.end_txn(1, commit=True)
    h.txn_commit("h", {T0: 4}, producer_id=3)
    h.end_txn(3, commit=False)
    h.txn_commit("g", {T1: 5}, producer_id=4)
    replayed = GroupCoordinator(h.config, h.clock, h.timer, InMemoryRecordSink())
    for record in h.sink.records:
        replayed.replay(record)
    for group in ("g", "h"):
        for tp in (T0, T1):
            assert replayed.fetch_offsets(group, [tp], True) == h.coordinator.fetch_offsets(group, [tp], True)
        assert replayed.pending_transactional_offsets(group) == h.coordinator.pending_transactional_offsets(
            group
        )
    assert offset(h, "g") == 2 and offset(h, "g", T1) == 9
    assert pending(h, "g") == {2: {T0: 3}, 4: {T1: 5}}


def test_while_the_partition_loads_commits_and_markers_are_told_to_retry() -> None:
    h = Harness()
    h.txn_commit("g", {T0: 1})
    h.sink.loading_groups.add("g")
    assert h.txn_commit("g", {T0: 2}).result == {T0: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
    assert h.end_txn(commit=True).result is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert h.sink.markers == 0 and pending(h, "g") == {1000: {T0: 1}}
    h.sink.loading_groups.clear()
    assert h.end_txn(commit=True).result is NONE
    assert offset(h, "g") == 1


def test_an_empty_group_takes_a_commit_without_generation_even_naming_a_member() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    assert h.state("g") is GroupState.EMPTY
    assert h.txn_commit("g", {T0: 2}, member_id="someone").result == {T0: NONE}
    assert h.txn_commit("g", {T0: 2}, member_id="someone", generation=0).result == {
        T0: ErrorCode.UNKNOWN_MEMBER_ID
    }
