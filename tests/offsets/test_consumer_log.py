"""Consumer-group records through the real `__consumer_offsets` log: the sink encodes the coordinator's
typed records, the loader reads them back (latest per key, tombstones dropped, replay order), the
cleaner compacts them, and `kafkito offsets dump` prints them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkito.broker.cli import main
from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition
from kafkito.broker.coordinator.consumer.records import (
    CONSUMER_GROUP_RECORD_TYPES,
    ClassicMemberMetadata,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberRecord,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataRecord,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    to_assignment,
)
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    TxnOffsetCommitRecord,
)
from kafkito.broker.log import cleaner
from kafkito.broker.offsets import OFFSETS_TOPIC
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.consumer_log import decode_consumer_record
from kafkito.broker.offsets.consumer_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    ConsumerGroupKey,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    PartitionMetadataValue,
    TopicMetadataValue,
    encode_consumer_key,
    encode_consumer_value,
)
from kafkito.broker.offsets.loader import DecodedPartition, decode_records, read_partition
from kafkito.broker.offsets.log_sink import encode_record
from kafkito.broker.offsets.records import OffsetValue, decode_key, encode_offset_key, encode_offset_value
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness

T = TypeVar("T")
T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)


def run(gen: Generator[None, None, T]) -> T:
    """Drive a chunked generator (the loader's) to its result."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]


def append(o: OffsetsHarness, group: str, records: Sequence[CoordinatorRecord]) -> None:
    errors: list[ErrorCode] = []
    o.manager.sink.append(group, records, errors.append)
    assert errors == [ErrorCode.NONE]


def loaded(o: OffsetsHarness, partition: int = 0) -> DecodedPartition:
    """What the loader replays from the partition, as a broker start does."""
    plog = o.logs.get_log(OFFSETS_TOPIC, partition)
    content = run(read_partition(plog, 1_000))
    return run(decode_records(content, 1_000))


# -- typed record <-> bytes ---------------------------------------------------------------------

names = st.text(max_size=10)
opt = st.none() | names
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
assignments = st.dictionaries(
    st.uuids(), st.frozensets(st.integers(min_value=0, max_value=2**31 - 1), max_size=5), max_size=3
).map(to_assignment)
typed: st.SearchStrategy[ConsumerGroupRecord] = st.one_of(
    st.builds(
        ConsumerGroupMetadataRecord, names, int32, st.integers(min_value=-(2**63), max_value=2**63 - 1)
    ),
    st.builds(
        ConsumerGroupMemberRecord,
        names,
        names,
        opt,
        opt,
        names,
        names,
        st.lists(names, max_size=3).map(tuple),
        opt,
        int32,
        opt,
        st.none()
        | st.builds(
            ClassicMemberMetadata, int32, st.lists(st.tuples(names, st.binary(max_size=9))).map(tuple)
        ),
    ),
    st.builds(ConsumerGroupTargetAssignmentMetadataRecord, names, int32),
    st.builds(ConsumerGroupTargetAssignmentMemberRecord, names, names, assignments),
    st.builds(
        ConsumerGroupCurrentAssignmentRecord,
        names,
        names,
        int32,
        int32,
        st.integers(min_value=0, max_value=3),
        assignments,
        assignments,
    ),
    st.builds(
        ConsumerGroupRegexRecord,
        names,
        names,
        st.lists(names, max_size=3).map(tuple),
        st.integers(min_value=0, max_value=2**62),
        st.integers(min_value=0, max_value=2**40),
    ),
    st.builds(
        ConsumerGroupPartitionMetadataRecord,
        names,
        st.lists(st.tuples(st.uuids(), names, int32), max_size=3).map(tuple),
    ),
    st.builds(ConsumerGroupMetadataTombstone, names),
    st.builds(ConsumerGroupPartitionMetadataTombstone, names),
    st.builds(ConsumerGroupMemberTombstone, names, names),
    st.builds(ConsumerGroupTargetAssignmentMetadataTombstone, names),
    st.builds(ConsumerGroupTargetAssignmentMemberTombstone, names, names),
    st.builds(ConsumerGroupCurrentAssignmentTombstone, names, names),
    st.builds(ConsumerGroupRegexTombstone, names, names),
)


@given(typed, st.integers(min_value=0, max_value=2**42))
def test_every_typed_record_survives_the_log_encoding(record: ConsumerGroupRecord, now_ms: int) -> None:
    raw_key, raw_value = encode_record(record, now_ms)
    key = decode_key(raw_key)
    assert isinstance(key, ConsumerGroupKey) and key.group == record.group_id
    assert decode_consumer_record(key, raw_value) == record
    assert (raw_value is None) == type(record).__name__.endswith("Tombstone")


def test_a_regex_timestamp_is_stored_as_the_epoch_ms_it_was_stamped_with() -> None:
    record = ConsumerGroupRegexRecord("g", "t.*", ("ta",), 3, WALL_EPOCH + 1_000)
    raw_key, raw_value = encode_record(record, WALL_EPOCH + 60_000)  # written a minute later
    assert raw_value is not None and raw_value.endswith((WALL_EPOCH + 1_000).to_bytes(8, "big") + b"\x00")
    key = decode_key(raw_key)
    assert isinstance(key, ConsumerGroupKey)
    assert decode_consumer_record(key, raw_value) == record


def test_assignments_written_in_any_order_read_back_canonical() -> None:
    # Kafka writes a member's topics in its map's order; the coordinator's form is sorted.
    value = CurrentMemberAssignmentValue(3, 2, 0, ((T2, (5, 1)), (T1, (0,)), (T2, (7,))), ())
    key = ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, "g", "m")
    record = decode_consumer_record(key, encode_consumer_value(value))
    assert record == ConsumerGroupCurrentAssignmentRecord(
        "g", "m", 3, 2, 0, ((T1, (0,)), (T2, (1, 5, 7))), ()
    )


# -- the real log -------------------------------------------------------------------------------


def member(group: str, member_id: str, topics: tuple[str, ...] = ("orders",)) -> ConsumerGroupMemberRecord:
    return ConsumerGroupMemberRecord(
        group, member_id, None, None, "cid", "/127.0.0.1", topics, None, 45_000, None
    )


def a_group_history(group: str = "cg") -> list[list[CoordinatorRecord]]:
    """The writes of a consumer group's life as the coordinator makes them, one list per write: m1
    joins; m2 joins with a regex subscription; m1 leaves (tombstones)."""
    a1 = to_assignment({T1: {0, 1, 2}})
    return [
        [
            member(group, "m1"),
            ConsumerGroupMetadataRecord(group, 1, 77),
            ConsumerGroupTargetAssignmentMemberRecord(group, "m1", a1),
            ConsumerGroupTargetAssignmentMetadataRecord(group, 1),
            ConsumerGroupCurrentAssignmentRecord(group, "m1", 1, 0, 0, a1, ()),
        ],
        [
            ConsumerGroupMemberRecord(group, "m2", "i2", "r1", "c2", "/h2", (), "ord.*", 30_000, "range"),
            ConsumerGroupRegexRecord(group, "ord.*", ("orders",), 4, 0),
            ConsumerGroupMetadataRecord(group, 2, 78),
            ConsumerGroupTargetAssignmentMemberRecord(group, "m1", to_assignment({T1: {0, 1}})),
            ConsumerGroupTargetAssignmentMemberRecord(group, "m2", to_assignment({T1: {2}})),
            ConsumerGroupTargetAssignmentMetadataRecord(group, 2),
            ConsumerGroupCurrentAssignmentRecord(group, "m1", 2, 1, 0, to_assignment({T1: {0, 1}}), ()),
            ConsumerGroupCurrentAssignmentRecord(group, "m2", 2, 0, 0, to_assignment({T1: {2}}), ()),
        ],
        [
            ConsumerGroupCurrentAssignmentTombstone(group, "m1"),
            ConsumerGroupTargetAssignmentMemberTombstone(group, "m1"),
            ConsumerGroupMemberTombstone(group, "m1"),
            ConsumerGroupMetadataRecord(group, 3, 78),
        ],
    ]


def live(group: str = "cg") -> list[ConsumerGroupRecord]:
    """The group's live records after `a_group_history`, in the loader's replay order."""
    return [
        ConsumerGroupMetadataRecord(group, 3, 78),
        ConsumerGroupMemberRecord(group, "m2", "i2", "r1", "c2", "/h2", (), "ord.*", 30_000, "range"),
        ConsumerGroupRegexRecord(group, "ord.*", ("orders",), 4, 0),
        ConsumerGroupTargetAssignmentMemberRecord(group, "m2", to_assignment({T1: {2}})),
        ConsumerGroupTargetAssignmentMetadataRecord(group, 2),
        ConsumerGroupCurrentAssignmentRecord(group, "m2", 2, 0, 0, to_assignment({T1: {2}}), ()),
    ]


def test_the_loader_replays_the_latest_record_per_key_in_group_order(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    o.h.commit("cg", {TopicPartition("orders", 0): 5})  # an offset written before the group's records
    for write in a_group_history():
        append(o, "cg", write)
    got = loaded(o)
    offsets = [r for r in got.records if not isinstance(r, CONSUMER_GROUP_RECORD_TYPES)]
    assert got.records[: len(live())] == live()  # the group's records before its offsets
    assert [type(r).__name__ for r in offsets] == ["OffsetCommitRecord"]
    assert list(got.group_ids) == ["cg"] and got.skipped == 0


def test_every_write_is_one_batch_of_kafkas_keys(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    for write in a_group_history():
        append(o, "cg", write)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    assert plog.log_end_offset == 5 + 8 + 4
    records = o.records("cg")
    assert [k.record_type for k, _ in records[:5]] == [5, 3, 7, 6, 8]
    assert records[13] == (ConsumerGroupKey(8, "cg", "m1"), None)
    assert records[16] == (ConsumerGroupKey(3, "cg"), GroupMetadataValue(3, 78))


def test_a_kafka_40_partition_loads(tmp_path: Path) -> None:
    """Records as Kafka 4.0 wrote them: no metadata hash, the subscribed topics in a type 4 record."""
    o = OffsetsHarness(tmp_path, partitions=1)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    topics = PartitionMetadataValue((TopicMetadataValue(T1, "orders", 3, ((0, ("r1",)),)),))
    plog.append(
        build_batch(
            [
                (
                    encode_consumer_key(ConsumerGroupKey(5, "old", "m")),
                    encode_consumer_value(
                        MemberMetadataValue(None, None, "c", "/h", ("orders",), None, 1_000, "uniform")
                    ),
                ),
                (encode_consumer_key(ConsumerGroupKey(4, "old")), encode_consumer_value(topics)),
                (
                    encode_consumer_key(ConsumerGroupKey(3, "old")),
                    encode_consumer_value(GroupMetadataValue(9)),
                ),
            ],
            WALL_EPOCH,
        )
    )
    got = loaded(o)
    # The type 4 record decodes (nothing skipped) but is not replayed: the metadata hash supersedes it.
    assert got.skipped == 0 and got.records == [
        ConsumerGroupMetadataRecord("old", 9, 0),
        ConsumerGroupMemberRecord("old", "m", None, None, "c", "/h", ("orders",), None, 1_000, "uniform"),
    ]
    key = decode_key(encode_consumer_key(ConsumerGroupKey(4, "old")))
    assert isinstance(key, ConsumerGroupKey)
    assert decode_consumer_record(key, encode_consumer_value(topics)) == (
        ConsumerGroupPartitionMetadataRecord("old", ((T1, "orders", 3),))
    )


def test_a_classic_group_converted_to_a_consumer_group_loads_as_the_consumer_group(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    append(o, "cg", [GroupMetadataRecord("cg", "consumer", 4, "range", None)])
    append(o, "cg", [GroupTombstone("cg"), *a_group_history()[0]])
    got = loaded(o).records
    assert not any(isinstance(r, GroupMetadataRecord) for r in got)
    assert got[0] == ConsumerGroupMetadataRecord("cg", 1, 77) and len(got) == 5


def test_undecodable_consumer_records_are_skipped(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    plog.append(build_batch([(encode_consumer_key(ConsumerGroupKey(3, "bad")), b"\x00\x00\x01")], WALL_EPOCH))
    plog.append(
        build_batch([(encode_consumer_key(ConsumerGroupKey(6, "bad")), b"\x00\x05" + bytes(5))], WALL_EPOCH)
    )
    append(o, "good", [ConsumerGroupMetadataRecord("good", 1, 0)])
    got = loaded(o)
    assert got.records == [ConsumerGroupMetadataRecord("good", 1, 0)] and got.skipped == 2


def test_an_unencodable_record_fails_the_write_and_writes_nothing(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    errors: list[ErrorCode] = []
    too_long = "x" * 40_000  # over the int16 length of a key string
    o.manager.sink.append("cg", [ConsumerGroupMetadataRecord("cg", 1), member("cg", too_long)], errors.append)
    assert errors == [ErrorCode.MESSAGE_TOO_LARGE]
    assert o.logs.get_log(OFFSETS_TOPIC, 0).log_end_offset == 0


# -- compaction ---------------------------------------------------------------------------------


def test_compaction_keeps_the_latest_per_key_and_drops_tombstones_after_retention(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1, log_props={"log.cleaner.delete.retention.ms": 60_000})
    for write in a_group_history():
        append(o, "cg", write)
    append(o, "cg", [ConsumerGroupRegexTombstone("cg", "ord.*")])
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    before = loaded(o).records
    assert ConsumerGroupRegexRecord("cg", "ord.*", ("orders",), 4, 0) not in before
    plog.roll()
    plan = cleaner.compact(plog, o.wall(), force=True)
    # 18 records; live keys: 3, 5/m2, 6, 7/m2, 8/m2; tombstones kept within retention: 8/m1, 7/m1, 5/m1, 16.
    assert plan is not None and (plan.records_before, plan.records_after) == (18, 5 + 4)
    assert loaded(o).records == before
    plog.roll()
    o.h.advance(60_001)
    plan = cleaner.compact(plog, o.wall(), force=True)
    assert plan is not None and plan.records_after == 5
    assert loaded(o).records == before
    keys = [k for k, _ in o.records("cg")]
    assert len(keys) == len(set(keys)) == 5 and all(v is not None for _, v in o.records("cg"))


# -- kafkito offsets dump -----------------------------------------------------------------------


def test_dump_prints_consumer_group_records_readably(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = OffsetsHarness(tmp_path / "data", partitions=3)
    orders = o.logs.create_topic("orders", 3, 1)
    a = to_assignment({orders.topic_id: {0, 2}, T2: {1}})
    append(
        o,
        "cg",
        [
            ConsumerGroupMemberRecord(
                "cg",
                "m1",
                None,
                "r",
                "cid",
                "/h",
                ("orders",),
                None,
                45_000,
                None,
                ClassicMemberMetadata(10_000, (("range", b"\x01"),)),
            ),
            ConsumerGroupMetadataRecord("cg", 4, -5),
            ConsumerGroupCurrentAssignmentRecord("cg", "m1", 4, 3, 0, a, ()),
            ConsumerGroupRegexRecord("cg", "o.*", ("orders",), 2, WALL_EPOCH),
            ConsumerGroupMemberTombstone("cg", "gone"),
        ],
    )
    o.h.commit("cg", {TopicPartition("orders", 0): OffsetAndMetadata(3)})
    o.close()
    assert main(["offsets", "dump", "--data-dir", str(tmp_path / "data"), "--group", "cg"]) == 0
    out: list[dict[str, Any]] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["key"]["type"] for line in out] == [
        "consumer_group_member_metadata",
        "consumer_group_metadata",
        "consumer_group_current_member_assignment",
        "consumer_group_regular_expression",
        "consumer_group_member_metadata",
        "offset",
    ]
    m, g, c, r, tomb, _ = out
    assert m["key"] == {"type": "consumer_group_member_metadata", "group": "cg", "member_id": "m1"}
    assert m["value"]["classic_member"] == {
        "session_timeout_ms": 10_000,
        "supported_protocols": [{"name": "range", "metadata": "AQ=="}],
    }
    assert m["value"]["subscribed_topic_names"] == ["orders"] and m["value"]["rack_id"] == "r"
    assert g["value"] == {"epoch": 4, "metadata_hash": -5}
    assigned = {p["topic_id"]: (p["topic"], p["partitions"]) for p in c["value"]["assigned"]}
    # T2 is no topic of this data directory: no name.
    assert assigned == {str(orders.topic_id): ("orders", [0, 2]), str(T2): (None, [1])}
    assert c["value"]["member_epoch"] == 4 and c["value"]["pending_revocation"] == []
    assert r["key"]["regex"] == "o.*" and r["value"] == {
        "topics": ["orders"],
        "version": 2,
        "timestamp": WALL_EPOCH,
    }
    assert tomb["key"]["member_id"] == "gone" and tomb["value"] is None


def test_dump_shows_an_undecodable_consumer_value_as_hex(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = OffsetsHarness(tmp_path / "data", partitions=1)
    plog = o.logs.get_log(OFFSETS_TOPIC, 0)
    plog.append(build_batch([(encode_consumer_key(ConsumerGroupKey(6, "g")), b"\x00\x00\x01")], WALL_EPOCH))
    plog.append(
        build_batch([(encode_offset_key("g", "t", 0), encode_offset_value(OffsetValue(1, "", 0)))], 0)
    )
    o.close()
    assert main(["offsets", "dump", "--data-dir", str(tmp_path / "data")]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["key"] == {"type": "consumer_group_target_assignment_metadata", "group": "g"}
    assert first["value"]["hex"] == "000001" and "need 4 bytes" in first["value"]["error"]


def test_group_records_written_while_a_transaction_is_open_still_replay_before_offsets(
    tmp_path: Path,
) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    tp = TopicPartition("orders", 0)
    append(o, "cg", [TxnOffsetCommitRecord("cg", tp, OffsetAndMetadata(7), 42, 0)])  # left open
    for write in a_group_history():
        append(o, "cg", write)
    o.h.commit("cg", {tp: 3})
    got = loaded(o).records
    assert got[: len(live())] == live()
    # The offsets after them in log order (the open transaction's came first), as without groups.
    assert [type(r).__name__ for r in got[len(live()) :]] == ["TxnOffsetCommitRecord", "OffsetCommitRecord"]
