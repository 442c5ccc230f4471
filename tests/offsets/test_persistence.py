"""Commits and group records on the `__consumer_offsets` log, and what a restart rebuilds from them."""

from __future__ import annotations

from pathlib import Path

from pytest import MonkeyPatch

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupState,
    LeavingMember,
    OffsetAndMetadata,
    OffsetCommitRecord,
    PartitionOffset,
    TopicPartition,
)
from kafkito.broker.offsets import OFFSETS_TOPIC, log_sink
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.log_sink import encode_record
from kafkito.broker.offsets.records import GroupKey, GroupValue, OffsetKey, OffsetValue
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import REBALANCE_MS, SESSION_MS, subscription
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def fetched(o: OffsetsHarness, group: str, *tps: TopicPartition) -> dict[TopicPartition, int]:
    error, result = o.coordinator.fetch_offsets(group, list(tps) or None)
    assert error is ErrorCode.NONE
    return {tp: p.offset for tp, p in result.items()}


def test_offsets_topic_is_created_compacted_with_the_configured_partitions(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=7)
    info = o.logs.topic(OFFSETS_TOPIC)
    assert info is not None and info.partitions == 7
    assert info.configs["cleanup.policy"] == "compact"
    assert o.logs.log_config(OFFSETS_TOPIC).compact
    # The partition count is fixed once the topic exists, whatever the config says later.
    assert o.restart(partitions=3).manager.num_partitions == 7


def test_a_commit_is_one_batch_of_v1_keys_and_v3_values_in_the_groups_partition(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.advance(5)
    reply = o.h.commit("g", {T0: OffsetAndMetadata(10, "m", 3), T1: 20})
    assert reply.result == {T0: ErrorCode.NONE, T1: ErrorCode.NONE}
    assert o.records("g") == [
        (OffsetKey("g", "t", 0), OffsetValue(10, "m", WALL_EPOCH + 5, 3)),
        (OffsetKey("g", "t", 1), OffsetValue(20, "", WALL_EPOCH + 5, -1)),
    ]
    plog = o.logs.get_log(OFFSETS_TOPIC, o.partition_of("g"))
    [header] = plog.batch_headers()
    assert (header.record_count, header.max_timestamp, header.compression) == (2, WALL_EPOCH + 5, 0)
    for other in range(o.manager.num_partitions):
        if other != o.partition_of("g"):
            assert o.logs.get_log(OFFSETS_TOPIC, other).log_end_offset == 0


def test_a_commit_with_an_explicit_expiry_is_written_as_offset_value_v1(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.commit("g", {T0: OffsetAndMetadata(1, "", -1, WALL_EPOCH, WALL_EPOCH + 60_000)})
    [(_, value)] = o.records("g")
    assert value == OffsetValue(1, "", WALL_EPOCH, -1, WALL_EPOCH + 60_000)


def test_group_record_on_stable_carries_members_assignments_and_protocol(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    group_records = [(k, v) for k, v in o.records("g") if isinstance(k, GroupKey)]
    assert len(group_records) == 1
    value = group_records[0][1]
    assert isinstance(value, GroupValue)
    assert (value.protocol_type, value.generation, value.protocol, value.leader) == (
        "consumer",
        1,
        "range",
        leader,
    )
    assert [(m.member_id, m.client_id, m.client_host) for m in value.members] == [
        (leader, "c0", "/127.0.0.1"),
        (follower, "c1", "/127.0.0.1"),
    ]
    assert [(m.session_timeout, m.rebalance_timeout) for m in value.members] == [
        (SESSION_MS, REBALANCE_MS)
    ] * 2
    assert [m.subscription for m in value.members] == [subscription("t")] * 2
    assert [m.assignment for m in value.members] == [leader.encode(), follower.encode()]
    group = o.coordinator.get_group("g")
    assert group is not None and group.state_timestamp_ms is not None
    assert value.current_state_timestamp == group.state_timestamp_ms


def test_group_record_on_empty_has_no_members(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    o.h.advance(500)
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    assert o.h.state() is GroupState.EMPTY
    _, last = [(k, v) for k, v in o.records("g") if isinstance(k, GroupKey)][-1]
    assert last == GroupValue("consumer", 2, None, None, (), o.h.now)


def test_static_replacement_in_stable_rewrites_the_group_record_with_the_new_id(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    ids = o.h.stable_group(2, instances=["a", "b"])
    before = len(o.records("g"))
    rejoin = o.h.join("g", instance="b", client_id="c1")
    new_id = rejoin.result.member_id
    assert rejoin.result.error is ErrorCode.NONE and new_id not in ids
    records = o.records("g")
    assert len(records) == before + 1
    value = records[-1][1]
    assert isinstance(value, GroupValue)
    assert {m.group_instance_id: m.member_id for m in value.members} == {"a": ids[0], "b": new_id}


def test_restart_brings_back_committed_offsets_of_simple_consumers(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    for i in range(30):
        assert o.h.commit(f"g{i}", {T0: i, T1: 100 + i}).result[T0] is ErrorCode.NONE
    o.h.commit("g3", {T0: 333})
    r = o.restart()
    assert fetched(r, "g3", T0, T1) == {T0: 333, T1: 103}
    assert fetched(r, "g29") == {T0: 29, T1: 129}
    assert len(r.coordinator.groups()) == 30
    assert all(g.state is GroupState.EMPTY and g.protocol_type is None for g in r.coordinator.groups())


def test_restart_after_a_crash_keeps_every_acknowledged_commit(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    for i in range(200):
        o.h.commit("g", {TopicPartition("t", i % 7): i})
    r = o.restart(crash=True)
    assert fetched(r, "g") == {
        TopicPartition("t", p): max(i for i in range(200) if i % 7 == p) for p in range(7)
    }


def test_committed_metadata_epoch_and_timestamps_survive_a_restart(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.advance(1_234)
    o.h.commit("g", {T0: OffsetAndMetadata(5, "hello", 7)})
    r = o.restart(gap_ms=10_000)
    _, result = r.coordinator.fetch_offsets("g", [T0])
    assert result == {T0: PartitionOffset(5, "hello", 7, ErrorCode.NONE)}
    group = r.coordinator.get_group("g")
    assert group is not None
    # The new process's clock started over at 0; the commit happened 10 s of wall time earlier.
    assert group.offsets[T0].commit_timestamp_ms == r.h.now - 10_000


def test_stable_group_reloads_stable_with_members_assignments_and_fresh_deadlines(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    gen = o.h.generation()
    o.h.commit("g", {T0: 42}, member_id=follower, generation=gen)
    o.h.advance(SESSION_MS - 1)  # nearly expired in the old process
    r = o.restart(crash=True, gap_ms=60_000)
    assert r.h.state() is GroupState.STABLE
    assert r.h.generation() == gen and r.h.leader() == leader
    assert r.h.members() == {leader, follower}
    assert r.h.sync("g", follower, gen).result.assignment == follower.encode()
    assert fetched(r, "g", T0) == {T0: 42}
    described = r.coordinator.describe_groups(["g"])[0].summary
    assert (described.state, described.protocol_type, described.protocol) == ("Stable", "consumer", "range")
    # Deadlines start at load: both members have a whole session from now.
    r.h.advance(SESSION_MS - 1)
    assert r.h.heartbeat("g", leader, gen) is ErrorCode.NONE
    assert r.h.members() == {leader, follower}
    r.h.advance(1)
    assert r.h.members() == {leader}  # the follower never heartbeat after the load


def test_empty_group_with_offsets_reloads_empty_keeping_protocol_type_and_generation(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    o.h.commit("g", {T0: 7}, member_id=leader, generation=1)
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    assert o.h.state() is GroupState.EMPTY
    r = o.restart()
    group = r.coordinator.get_group("g")
    assert group is not None
    assert (group.state, group.protocol_type, group.generation_id, group.size) == (
        GroupState.EMPTY,
        "consumer",
        2,
        0,
    )
    assert fetched(r, "g", T0) == {T0: 7}
    # A reloaded Empty group takes commits from the admin client as before.
    assert r.h.commit("g", {T0: 8}).result == {T0: ErrorCode.NONE}


def test_deleted_group_stays_deleted_after_restart(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    leader, follower = o.h.stable_group(2)
    o.h.commit("g", {T0: 7}, member_id=leader, generation=1)
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    assert o.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NONE}
    assert o.records("g")[-2:] == [(OffsetKey("g", "t", 0), None), (GroupKey("g"), None)]
    r = o.restart()
    assert r.coordinator.get_group("g") is None
    assert fetched(r, "g", T0) == {T0: -1}


def test_simple_consumer_group_deletion_writes_no_group_tombstone(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.commit("g", {T0: 1})
    assert o.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NONE}
    assert o.records("g")[-1] == (OffsetKey("g", "t", 0), None)
    assert not any(isinstance(k, GroupKey) for k, _ in o.records("g"))


def test_offset_delete_survives_restart_and_a_later_commit_wins_again(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.commit("g", {T0: 1, T1: 2})
    assert o.coordinator.delete_offsets("g", [T0]) == (ErrorCode.NONE, {T0: ErrorCode.NONE})
    r = o.restart()
    assert fetched(r, "g", T0, T1) == {T0: -1, T1: 2}
    r.h.commit("g", {T0: 9})
    assert fetched(r.restart(), "g", T0, T1) == {T0: 9, T1: 2}


def test_too_large_commit_append_is_invalid_commit_offset_size(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, log_props={"message.max.bytes": 10_000})
    big = {TopicPartition("t", p): OffsetAndMetadata(1, "x" * 4_000) for p in range(5)}
    assert o.h.commit("g", big).result == dict.fromkeys(big, ErrorCode.INVALID_COMMIT_OFFSET_SIZE)
    assert fetched(o, "g", T0) == {T0: -1}
    assert o.h.commit("g", {T0: 3}).result == {T0: ErrorCode.NONE}


def test_a_huge_commit_is_refused_before_it_is_encoded(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    """100,000 partitions cannot fit max.message.bytes: the answer comes without encoding them (issue 12,
    defect 7: encoding them took half a second of the loop, only to fail the append)."""
    encoded: list[object] = []
    real_encode = log_sink.encode_record
    monkeypatch.setattr(log_sink, "encode_record", lambda *a: encoded.append(a) or real_encode(*a))
    o = OffsetsHarness(tmp_path)
    huge = {TopicPartition("t", p): OffsetAndMetadata(1) for p in range(100_000)}
    assert o.h.commit("g", huge).result == dict.fromkeys(huge, ErrorCode.INVALID_COMMIT_OFFSET_SIZE)
    assert encoded == [] and o.records("g") == []
    assert o.h.commit("g", {T0: 3}).result == {T0: ErrorCode.NONE}


def test_commits_near_max_message_bytes_are_judged_by_their_encoded_size(tmp_path: Path) -> None:
    limit = 100_000
    o = OffsetsHarness(tmp_path, log_props={"message.max.bytes": limit})
    for count in range(1_000, 3_000, 50):
        offsets = {TopicPartition("topic", p): OffsetAndMetadata(p, "m") for p in range(count)}
        size = len(
            build_batch(
                [encode_record(OffsetCommitRecord("g", tp, om), o.wall()) for tp, om in offsets.items()],
                0,
            )
        )
        expected = ErrorCode.NONE if size <= limit else ErrorCode.INVALID_COMMIT_OFFSET_SIZE
        assert set(o.h.commit("g", offsets).result.values()) == {expected}, (count, size)


def test_a_deleted_offsets_topic_partition_makes_commits_coordinator_not_available(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.logs.delete_topic(OFFSETS_TOPIC)
    assert o.h.commit("g", {T0: 3}).result == {T0: ErrorCode.COORDINATOR_NOT_AVAILABLE}


def test_a_reloaded_group_over_group_max_size_rebalances(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path)
    o.h.stable_group(3)
    r = o.restart(coordinator=CoordinatorConfig(group_max_size=2))
    assert r.h.state() is GroupState.PREPARING_REBALANCE
    assert r.h.generation() == 1
