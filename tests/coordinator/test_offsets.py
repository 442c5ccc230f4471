"""OffsetCommit and OffsetFetch in virtual time: validation by group state, metadata size, require_stable."""

from __future__ import annotations

from kafkito.broker.coordinator import GroupState, InMemoryRecordSink, OffsetAndMetadata, TopicPartition
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import Harness

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def test_commit_with_generation_minus_one_to_a_missing_group_creates_it_and_succeeds() -> None:
    h = Harness()
    assert h.commit("simple", {T0: 42}).result == {T0: ErrorCode.NONE}
    assert h.state("simple") is GroupState.EMPTY
    error, offsets = h.coordinator.fetch_offsets("simple", [T0])
    assert (error, offsets[T0].offset, offsets[T0].error) == (ErrorCode.NONE, 42, ErrorCode.NONE)


def test_commit_with_generation_minus_one_to_an_empty_group_succeeds() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    assert h.commit("g", {T0: 2}).result == {T0: ErrorCode.NONE}
    assert h.coordinator.fetch_offsets("g", [T0])[1][T0].offset == 2


def test_commit_with_a_generation_to_a_missing_group_is_group_id_not_found() -> None:
    # OffsetCommit v9, the coordinator's default (before v9 ILLEGAL_GENERATION: see
    # tests/offsets/test_commit_outside_group.py).
    h = Harness()
    assert h.commit("g", {T0: 1}, member_id="m", generation=3).result == {T0: ErrorCode.GROUP_ID_NOT_FOUND}
    assert h.coordinator.get_group("g") is None


def test_commit_with_a_generation_to_an_empty_group_is_unknown_member_id() -> None:
    h = Harness()
    h.commit("g", {T0: 1})
    assert h.commit("g", {T0: 1}, member_id="m", generation=0).result == {T0: ErrorCode.UNKNOWN_MEMBER_ID}


def test_commit_without_membership_to_a_non_empty_group_is_unknown_member_id() -> None:
    h = Harness()
    h.stable_group(1)
    assert h.commit("g", {T0: 1}).result == {T0: ErrorCode.UNKNOWN_MEMBER_ID}


def test_commit_during_completing_rebalance_is_rebalance_in_progress() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(member_id=leader)
    h.join(member_id=follower)
    assert h.state() is GroupState.COMPLETING_REBALANCE
    reply = h.commit("g", {T0: 1}, member_id=follower, generation=2)
    assert reply.result == {T0: ErrorCode.REBALANCE_IN_PROGRESS}


def test_commit_during_preparing_rebalance_from_the_previous_generation_is_allowed() -> None:
    h = Harness()
    leader, follower = h.stable_group(2)
    h.join(member_id=leader)
    assert h.commit("g", {T0: 7}, member_id=follower, generation=1).result == {T0: ErrorCode.NONE}


def test_commit_with_a_stale_generation_is_illegal_generation() -> None:
    h = Harness()
    _, follower = h.stable_group(2)
    assert h.commit("g", {T0: 1}, member_id=follower, generation=0).result == {
        T0: ErrorCode.ILLEGAL_GENERATION
    }


def test_commit_metadata_over_4096_is_offset_metadata_too_large_per_partition() -> None:
    h = Harness()
    reply = h.commit(
        "g",
        {T0: OffsetAndMetadata(5, "x" * 4096), T1: OffsetAndMetadata(6, "x" * 4097)},
    )
    assert reply.result == {T0: ErrorCode.NONE, T1: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    offsets = h.coordinator.fetch_offsets("g", [T0, T1])[1]
    assert (offsets[T0].offset, offsets[T0].metadata, offsets[T1].offset) == (5, "x" * 4096, -1)
    only_too_large = h.commit("g", {T1: OffsetAndMetadata(6, "y" * 5000)})
    assert only_too_large.result == {T1: ErrorCode.OFFSET_METADATA_TOO_LARGE}


def test_require_stable_fetch_is_unstable_offset_commit_while_a_commit_is_in_flight() -> None:
    store = InMemoryRecordSink(defer_writes=True)
    h = Harness(sink=store)
    reply = h.commit("g", {T0: 10})
    assert not reply.done
    stable = h.coordinator.fetch_offsets("g", [T0, T1], require_stable=True)[1]
    assert stable[T0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert stable[T1].error is ErrorCode.NONE  # nothing in flight for this one
    plain = h.coordinator.fetch_offsets("g", [T0], require_stable=False)[1]
    assert (plain[T0].offset, plain[T0].error) == (-1, ErrorCode.NONE)
    store.complete_writes()
    assert reply.result == {T0: ErrorCode.NONE}
    after = h.coordinator.fetch_offsets("g", [T0], require_stable=True)[1]
    assert (after[T0].offset, after[T0].error) == (10, ErrorCode.NONE)


def test_failed_offset_write_maps_the_error_and_leaves_nothing_committed() -> None:
    store = InMemoryRecordSink()
    store.fail_with = ErrorCode.MESSAGE_TOO_LARGE
    h = Harness(sink=store)
    assert h.commit("g", {T0: 1}).result == {T0: ErrorCode.INVALID_COMMIT_OFFSET_SIZE}
    assert h.coordinator.fetch_offsets("g", [T0], require_stable=True)[1][T0].offset == -1


def test_fetch_on_an_unknown_group_is_minus_one_with_no_error() -> None:
    error, offsets = Harness().coordinator.fetch_offsets("nope", [T0])
    assert error is ErrorCode.NONE
    assert (offsets[T0].offset, offsets[T0].metadata, offsets[T0].error) == (-1, "", ErrorCode.NONE)


def test_fetch_all_partitions_of_a_group() -> None:
    h = Harness()
    h.commit("g", {T0: 1, T1: 2})
    offsets = h.coordinator.fetch_offsets("g", None)[1]
    assert {tp: o.offset for tp, o in offsets.items()} == {T0: 1, T1: 2}


def test_commit_timestamp_defaults_to_the_clock() -> None:
    h = Harness()
    h.advance(12_345)
    h.commit("g", {T0: 1})
    group = h.coordinator.get_group("g")
    assert group is not None and group.offsets[T0].commit_timestamp_ms == 12_345


def test_empty_group_id_is_allowed_for_commits() -> None:
    assert Harness().commit("", {T0: 1}).result == {T0: ErrorCode.NONE}
