"""A share group survives a broker restart: it is replayed from its records in `__consumer_offsets`
(types 9-15, Kafka's formats), which `kafkito offsets dump` decodes; the codecs round-trip."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from kafkito.broker.coordinator.share.records import (
    ShareGroupCurrentAssignmentRecord,
    ShareGroupCurrentAssignmentTombstone,
    ShareGroupMemberRecord,
    ShareGroupMemberTombstone,
    ShareGroupMetadataRecord,
    ShareGroupMetadataTombstone,
    ShareGroupRecord,
    ShareGroupStatePartitionMetadataRecord,
    ShareGroupStatePartitionMetadataTombstone,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupTargetAssignmentMetadataRecord,
    ShareGroupTargetAssignmentMetadataTombstone,
)
from kafkito.broker.offsets import dump
from kafkito.broker.offsets.share_records import decode_share_record, encode_share_record
from kafkito.protocol.errors import ErrorCode
from tests.share_groups.test_wire import DESCRIBE, beat
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

T = uuid.UUID(int=7)
RECORDS: list[ShareGroupRecord] = [
    ShareGroupMetadataRecord("g", 4, -123456789),
    ShareGroupMemberRecord("g", "m", "rack", "client", "/10.0.0.1", ("a", "b")),
    ShareGroupMemberRecord("g", "m", None, "", "", ()),
    ShareGroupTargetAssignmentMetadataRecord("g", 4),
    ShareGroupTargetAssignmentMemberRecord("g", "m", ((T, (0, 2)),)),
    ShareGroupCurrentAssignmentRecord("g", "m", 4, 3, 0, ((T, (0, 2)),)),
    ShareGroupStatePartitionMetadataRecord("g", ((T, "a", (1,)),), ((T, "a", (0, 2)),), ((T, "a"),)),
    ShareGroupMetadataTombstone("g"),
    ShareGroupMemberTombstone("g", "m"),
    ShareGroupTargetAssignmentMetadataTombstone("g"),
    ShareGroupTargetAssignmentMemberTombstone("g", "m"),
    ShareGroupCurrentAssignmentTombstone("g", "m"),
    ShareGroupStatePartitionMetadataTombstone("g"),
]


def test_codecs_round_trip() -> None:
    for record in RECORDS:
        key, value = encode_share_record(record)
        assert decode_share_record(key, value) == record
        assert (value is None) == type(record).__name__.endswith("Tombstone")


def test_key_layout_is_kafkas() -> None:
    key, value = encode_share_record(ShareGroupMetadataRecord("g", 1, 0))
    assert key == b"\x00\x0b\x00\x01g"  # record type 11, then the group id as a classic string
    assert value == b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00" * 8 + b"\x00"
    key, _ = encode_share_record(ShareGroupMemberTombstone("g", "m"))
    assert key == b"\x00\x0a\x00\x01g\x00\x01m"


def test_a_share_group_survives_a_restart(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "restart"
    props = dict(group_share_session_timeout_ms=2000, group_share_min_session_timeout_ms=1000)
    broker = broker_factory(data, **props)
    create_topic(broker.bootstrap, "share-restart", 2)
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        beat(client, "sg-r", m1, 0, ["share-restart"])
        beat(client, "sg-r", m2, 0, ["share-restart"])
        assert beat(client, "sg-r", m1, 1).member_epoch == 2
        before = client.request(DESCRIBE, 1, group_ids=["sg-r"], include_authorized_operations=False).groups[
            0
        ]
    broker.stop()
    kinds = [r["key"]["type"] for r in dump.records(data, "sg-r")]
    assert {
        "share_group_metadata",
        "share_group_member_metadata",
        "share_group_current_member_assignment",
        "share_group_target_assignment_member",
        "share_group_target_assignment_metadata",
    } <= set(kinds)

    again = broker_factory(data, **props)
    with WireClient(again.bootstrap) as client:
        after = client.request(DESCRIBE, 1, group_ids=["sg-r"], include_authorized_operations=False).groups[0]
        assert (after.group_epoch, after.assignment_epoch, after.group_state) == (
            before.group_epoch, before.assignment_epoch, "Stable",
        )  # fmt: skip
        epochs = {m.member_id: m.member_epoch for m in after.members}
        assert epochs == {m.member_id: m.member_epoch for m in before.members}
        assert beat(client, "sg-r", m1, 2).error_code == ErrorCode.NONE
        # m2 never heartbeats again: its session (restarted at load) expires, and m1 gets everything.

        def m1_has_everything() -> bool:
            r = beat(client, "sg-r", m1, epochs[m1])
            assert r.error_code == ErrorCode.NONE
            epochs[m1] = r.member_epoch
            return r.assignment is not None and sorted(r.assignment.topic_partitions[0].partitions) == [0, 1]

        wait_until(m1_has_everything, what="m2 fenced by its session timeout")
        described = client.request(DESCRIBE, 1, group_ids=["sg-r"], include_authorized_operations=False)
        assert [m.member_id for m in described.groups[0].members] == [m1]
