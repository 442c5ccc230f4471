"""The `__consumer_offsets` encoding of streams-group records (types 17, 19-23) against the bytes Kafka
4.4's generated StreamsGroup*Value classes write (MessageUtil.toVersionPrefixedBytes, version 0), and
round trips of every record type through the encoder and decoder."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkito.broker.coordinator.streams.records import (
    StreamsGroupCurrentAssignmentRecord,
    StreamsGroupCurrentAssignmentTombstone,
    StreamsGroupMemberRecord,
    StreamsGroupMemberTombstone,
    StreamsGroupMetadataRecord,
    StreamsGroupMetadataTombstone,
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMemberRecord,
    StreamsGroupTargetAssignmentMemberTombstone,
    StreamsGroupTargetAssignmentMetadataRecord,
    StreamsGroupTargetAssignmentMetadataTombstone,
    StreamsGroupTopologyRecord,
    StreamsGroupTopologyTombstone,
)
from kafkito.broker.coordinator.streams.topology import (
    CopartitionGroup,
    StreamsTopology,
    Subtopology,
    TopicInfo,
)
from kafkito.broker.offsets.dump import describe
from kafkito.broker.offsets.encoding import RecordFormatError
from kafkito.broker.offsets.streams_records import decode_streams_record, encode_streams_record

NOW_MS = 1_700_000_000_000
G, M = "app", "member-1"

# Value bytes written by Kafka 4.4's generated classes for the records beside them.
KAFKA_VALUES: list[tuple[str, StreamsGroupRecord]] = [
    (
        "000000000007fffffee08e04fb3502000400000002011902156e756d2e7374616e6462792e7265706c69636173023100",
        StreamsGroupMetadataRecord(G, 7, -1234567890123, 2, (("num.standby.replicas", "1"),)),
    ),
    ("000000000001000000000000000000", StreamsGroupMetadataRecord(G, 1, 0, -1, ())),
    (
        "000000077261636b2d61066170702d310b2f3132372e302e302e3100007530000000030770726f632d31010a6c6f63616c"
        "686f7374fde80002057a6f6e65037a310000",
        StreamsGroupMemberRecord(
            G,
            M,
            None,
            "rack-a",
            "app-1",
            "/127.0.0.1",
            30_000,
            3,
            "proc-1",
            ("localhost", 65000),
            (("zone", "z1"),),
        ),
    ),
    (
        "000005696e7374000263032f6800000001000000000270ff0100",
        StreamsGroupMemberRecord(G, M, "inst", None, "c", "/h", 1, 0, "p", None, ()),
    ),
    ("0000000000090100080000018bcfe56800", StreamsGroupTargetAssignmentMetadataRecord(G, 9, NOW_MS)),
    (
        "0000020230030000000000000002000202310200000001000100",
        StreamsGroupTargetAssignmentMemberRecord(G, M, (("0", (0, 2)),), (("1", (1,)),), ()),
    ),
    (
        "0000000000050000000401020230020000000300010102023103000000000000000100010100",
        StreamsGroupCurrentAssignmentRecord(G, M, 5, 4, 1, (("0", (3,)),), (), (), (("1", (0, 1)),), (), ()),
    ),
    (
        "0000000000010302300206776f726473010102106170702d7265706172746974696f6e01010002310101020e6170702d63"
        "68616e67656c6f67000000000000020f636c65616e75702e706f6c69637908636f6d7061637400000102106170702d7265"
        "706172746974696f6e00000004ffff0100020101020000000000",
        StreamsGroupTopologyRecord(
            G,
            StreamsTopology(
                1,
                (
                    Subtopology("0", source_topics=("words",), repartition_sink_topics=("app-repartition",)),
                    Subtopology(
                        "1",
                        state_changelog_topics=(
                            TopicInfo("app-changelog", 0, 0, (("cleanup.policy", "compact"),)),
                        ),
                        repartition_source_topics=(TopicInfo("app-repartition", 4, -1),),
                        copartition_groups=(CopartitionGroup(repartition_source_topics=(0,)),),
                    ),
                ),
            ),
        ),
    ),
]


@pytest.mark.parametrize(("value_hex", "record"), KAFKA_VALUES, ids=lambda v: type(v).__name__)
def test_kafka_written_value_decodes_and_encodes_to_the_same_bytes(
    value_hex: str, record: StreamsGroupRecord
) -> None:
    key, value = encode_streams_record(record, NOW_MS)
    assert value == bytes.fromhex(value_hex)
    assert decode_streams_record(key, value) == record


def test_current_assignment_with_kafka_44_assignment_epochs_is_read() -> None:
    """Kafka 4.4 writes each active task's assignment epochs (tag 0 of a task entry): read, not kept."""
    kafka = bytes.fromhex(
        "0000000000050000000400020230030000000300000004010009030000000200000005010101010100"
    )
    key, _ = encode_streams_record(StreamsGroupCurrentAssignmentTombstone(G, M), NOW_MS)
    assert decode_streams_record(key, kafka) == StreamsGroupCurrentAssignmentRecord(
        G, M, 5, 4, 0, (("0", (3, 4)),), (), (), (), (), ()
    )


def test_keys_carry_the_type_group_and_member() -> None:
    key, value = encode_streams_record(StreamsGroupMemberTombstone(G, M), NOW_MS)
    assert value is None
    assert key == bytes.fromhex("0013") + b"\x00\x03app" + b"\x00\x08member-1"
    key, _ = encode_streams_record(StreamsGroupTopologyTombstone(G), NOW_MS)
    assert key == bytes.fromhex("0017") + b"\x00\x03app"


@pytest.mark.parametrize(
    "tombstone",
    [
        StreamsGroupMetadataTombstone(G),
        StreamsGroupTopologyTombstone(G),
        StreamsGroupTargetAssignmentMetadataTombstone(G),
        StreamsGroupMemberTombstone(G, M),
        StreamsGroupTargetAssignmentMemberTombstone(G, M),
        StreamsGroupCurrentAssignmentTombstone(G, M),
    ],
    ids=lambda t: type(t).__name__,
)
def test_tombstones_round_trip_as_their_own_type(tombstone: StreamsGroupRecord) -> None:
    key, value = encode_streams_record(tombstone, NOW_MS)
    decoded = decode_streams_record(key, value)
    assert type(decoded) is type(tombstone) and decoded == tombstone


def test_a_truncated_value_is_a_format_error() -> None:
    key, value = encode_streams_record(KAFKA_VALUES[2][1], NOW_MS)
    assert value is not None
    with pytest.raises(RecordFormatError):
        decode_streams_record(key, value[:-3])


def test_offsets_dump_describes_streams_records() -> None:
    key, value = encode_streams_record(KAFKA_VALUES[5][1], NOW_MS)
    group, out = describe(key, value)
    assert group == G
    assert out["key"] == {"type": "streams_group_target_assignment_member", "group": G, "member_id": M}
    assert out["value"]["active"] == [["0", [0, 2]]]


_names = st.text(min_size=1, max_size=8)
_tasks = st.lists(
    st.tuples(_names, st.lists(st.integers(0, 2**31 - 1), max_size=4).map(lambda p: tuple(sorted(set(p))))),
    max_size=3,
).map(tuple)
_pairs = st.lists(st.tuples(_names, st.text(max_size=8)), max_size=3).map(tuple)
_i32 = st.integers(-(2**31), 2**31 - 1)


@given(
    st.one_of(
        st.builds(
            StreamsGroupMetadataRecord, st.just(G), _i32, st.integers(-(2**63), 2**63 - 1), _i32, _pairs
        ),
        st.builds(
            StreamsGroupMemberRecord,
            st.just(G),
            _names,
            st.none() | _names,
            st.none() | _names,
            st.text(max_size=8),
            st.text(max_size=8),
            _i32,
            _i32,
            st.text(max_size=8),
            st.none() | st.tuples(_names, st.integers(0, 65535)),
            _pairs,
        ),
        st.builds(StreamsGroupTargetAssignmentMetadataRecord, st.just(G), _i32, st.integers(1, 2**62)),
        st.builds(StreamsGroupTargetAssignmentMemberRecord, st.just(G), _names, _tasks, _tasks, _tasks),
        st.builds(
            StreamsGroupCurrentAssignmentRecord,
            st.just(G),
            _names,
            _i32,
            _i32,
            st.integers(-128, 127),
            _tasks,
            _tasks,
            _tasks,
            _tasks,
            _tasks,
            _tasks,
        ),
    )
)
def test_every_record_round_trips(record: StreamsGroupRecord) -> None:
    key, value = encode_streams_record(record, NOW_MS)
    assert decode_streams_record(key, value) == record
