"""What a classic group's coordinator answers at each moment of a cooperative rebalance and after a
subscribed topic is deleted, request by request, as Apache Kafka 4.4 answered the same sequence
(recorded against tests/support/kafka_reference for issue 27 item 7, where kafkito's transcript had
no difference): a heartbeat or a late SyncGroup during PreparingRebalance is REBALANCE_IN_PROGRESS,
a heartbeat in CompletingRebalance is NONE, an OffsetCommit at the current generation is taken in
PreparingRebalance and refused (REBALANCE_IN_PROGRESS) in CompletingRebalance, deleting a topic does
not rebalance the group, and a second LeaveGroup of a member is UNKNOWN_MEMBER_ID for that member."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from typing import Any

from tests.conformance.framework import Side
from tests.conformance.scenarios_admin import create
from tests.conformance.scenarios_groups import (
    FIND_COORDINATOR,
    LEAVE,
    OFFSET_COMMIT,
    SYNC,
    group_state,
    heartbeat,
    join,
    sync,
)
from tests.support.brokers import ThreadBroker

NONE, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED = 0, 25, 27, 79


def commit(side: Side, g: str, t: str, label: str, gen: int, member: str, conn: str) -> int:
    r = side.request(OFFSET_COMMIT, 9, label, conn, group_id=g, generation_id_or_member_epoch=gen,
                     member_id=member, group_instance_id=None,
                     topics=[{"name": t, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}])  # fmt: skip
    return int(r.topics[0].partitions[0].error_code)


def leave(side: Side, g: str, member: str, label: str, conn: str) -> Any:
    return side.request(LEAVE, 5, label, conn, group_id=g,
                        members=[{"member_id": member, "group_instance_id": None, "reason": None}])  # fmt: skip


def test_a_cooperative_rebalance_and_a_topic_deletion_are_answered_as_kafka(broker: ThreadBroker) -> None:
    side = Side(broker.bootstrap, "moments", {})
    try:
        g, t = side.name("group"), side.name("t")
        create(side, t, "topic", 2)
        side.request(FIND_COORDINATOR, 4, "group", key_type=0, coordinator_keys=[g])
        m1 = join(side, g, "", "m1 without id", "m1").member_id
        gen = join(side, g, m1, "m1 with its id", "m1").generation_id
        assert (
            sync(side, g, gen, m1, "m1 leader", "m1", [{"member_id": m1, "assignment": b"a1"}]).error_code
            == NONE
        )
        first = join(side, g, "", "m2 without id", "m2")
        assert first.error_code == MEMBER_ID_REQUIRED
        m2 = first.member_id
        join(side, g, m2, "m2 with its id (parks)", "m2", wait=False)
        side.wait_for("m2's rebalance", lambda: group_state(side, g) == "PreparingRebalance")
        assert heartbeat(side, g, gen, m1, "m1 told to rejoin", "m1").error_code == REBALANCE_IN_PROGRESS
        assert commit(side, g, t, "m1 commits in PreparingRebalance", gen, m1, "m1") == NONE
        gen2 = join(side, g, m1, "m1 rejoins", "m1").generation_id
        assert side.recv("m2").generation_id == gen2 == gen + 1
        assert heartbeat(side, g, gen2, m1, "m1 in CompletingRebalance", "m1").error_code == NONE
        assert (
            commit(side, g, t, "m1 commits in CompletingRebalance", gen2, m1, "m1") == REBALANCE_IN_PROGRESS
        )
        both = [{"member_id": m1, "assignment": b"a1"}, {"member_id": m2, "assignment": b""}]
        assert sync(side, g, gen2, m1, "m1 leader syncs", "m1", both).error_code == NONE
        # Cooperative: m1 revoked a partition and rejoins before m2 synced the round it was in.
        join(side, g, m1, "m1 rejoins after revoking (parks)", "m1", wait=False)
        side.wait_for("m1's rebalance", lambda: group_state(side, g) == "PreparingRebalance")
        late = side.request(SYNC, 5, "m2 syncs late", "m2", group_id=g, generation_id=gen2, member_id=m2,
                            group_instance_id=None, protocol_type="consumer", protocol_name="range",
                            assignments=[])  # fmt: skip
        assert late.error_code == REBALANCE_IN_PROGRESS
        assert (
            heartbeat(side, g, gen2, m2, "m2 in PreparingRebalance", "m2").error_code == REBALANCE_IN_PROGRESS
        )
        assert commit(side, g, t, "m2 commits in PreparingRebalance", gen2, m2, "m2") == NONE
        gen3 = join(side, g, m2, "m2 rejoins", "m2").generation_id
        assert side.recv("m1").generation_id == gen3 == gen2 + 1
        side.send(SYNC, 5, "m2 syncs (parks)", "m2", group_id=g, generation_id=gen3, member_id=m2,
                  group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=[])  # fmt: skip
        both = [{"member_id": m1, "assignment": b"a1"}, {"member_id": m2, "assignment": b"a2"}]
        assert sync(side, g, gen3, m1, "m1 leader syncs", "m1", both).error_code == NONE
        assert side.recv("m2").assignment == b"a2"
        # A subscribed topic deleted: the coordinator does not track topics, nothing rebalances.
        side.request(20, 6, "delete topic", topic_names=[t], timeout_ms=30_000)
        assert heartbeat(side, g, gen3, m1, "m1 after the deletion", "m1").error_code == NONE
        assert leave(side, g, m2, "m2 leaves", "m2").members[0].error_code == NONE
        assert heartbeat(side, g, gen3, m1, "m1 after m2 left", "m1").error_code == REBALANCE_IN_PROGRESS
        assert commit(side, g, t, "m1 commits the deleted topic", gen3, m1, "m1") == NONE
        assert leave(side, g, m1, "m1 leaves", "m1").members[0].error_code == NONE
        again = leave(side, g, m1, "m1 leaves again", "m1")
        assert again.error_code == NONE and again.members[0].error_code == UNKNOWN_MEMBER_ID
        assert heartbeat(side, g, gen3, m1, "m1 after leaving", "m1").error_code == UNKNOWN_MEMBER_ID
    finally:
        side.close()
