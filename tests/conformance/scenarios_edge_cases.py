"""Small answers found while comparing Kafka 4.4's newer versions (issue 30): a ListOffsets request that
repeats a partition, a timestamp a version does not know on a topic that does not exist, a topic named
twice in an OffsetCommit or TxnOffsetCommit, Metadata asked by name and by id at once, CreateAcls and
DeleteAcls with an UNKNOWN (0) enum, and how ConsumerGroupDescribe reports a member without a regex."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from typing import Any

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create
from tests.conformance.scenarios_consumer_groups import Member
from tests.conformance.scenarios_kafka44 import UNKNOWN_ID, topic_id
from tests.conformance.scenarios_txn import SETTLING, init

LIST_OFFSETS, METADATA, OFFSET_COMMIT, FIND_COORDINATOR, TXN_OFFSET_COMMIT = 2, 3, 8, 10, 28
CREATE_ACLS, DELETE_ACLS, CG_HEARTBEAT, CG_DESCRIBE = 30, 31, 68, 69


def _at(p: int, ts: int) -> dict[str, Any]:
    return {"partition_index": p, "current_leader_epoch": -1, "timestamp": ts}


@scenario("api")
def list_offsets_refusals(side: Side) -> None:
    t = side.name()
    create(side, t, "two partitions", 2)
    for v in (1, 7, 11):
        side.request(LIST_OFFSETS, v, "a partition asked twice", replica_id=-1, isolation_level=0, timeout_ms=1000,
                     topics=[{"name": t, "partitions": [_at(0, -1), _at(1, -1), _at(0, -2)]}])  # fmt: skip
        side.request(LIST_OFFSETS, v, "a topic listed twice", replica_id=-1, isolation_level=0, timeout_ms=1000,
                     topics=[{"name": t, "partitions": [_at(0, -1)]}, {"name": t, "partitions": [_at(1, -1)]}])  # fmt: skip
    for v, ts in ((9, -5), (10, -6), (10, -5), (8, -5), (7, -4), (6, -3)):
        side.request(LIST_OFFSETS, v, f"timestamp {ts}, a topic that does not exist", replica_id=-1, isolation_level=0,
                     timeout_ms=1000, topics=[{"name": side.name("missing"), "partitions": [_at(0, ts)]}])  # fmt: skip
        side.request(LIST_OFFSETS, v, f"timestamp {ts}, the topic", replica_id=-1, isolation_level=0,
                     timeout_ms=1000, topics=[{"name": t, "partitions": [_at(0, ts), _at(5, ts)]}])  # fmt: skip


def _commit(name: str, p: int, offset: int) -> dict[str, Any]:
    return {"name": name, "partitions": [{"partition_index": p, "committed_offset": offset, "committed_leader_epoch": -1,
                                          "committed_metadata": ""}]}  # fmt: skip


@scenario("sequence")
def offsets_of_a_topic_named_twice(side: Side) -> None:
    t, g, txn = side.name(), side.name("group"), side.name("txn")
    create(side, t, "two partitions", 2)
    side.request(FIND_COORDINATOR, 4, "group", key_type=0, coordinator_keys=[g])
    twice = [_commit(t, 0, 3), _commit(side.name("missing"), 0, 1), _commit(t, 1, 4), _commit(t, 7, 5)]
    side.request_settled(OFFSET_COMMIT, 9, "a topic named twice", group_id=g, generation_id_or_member_epoch=-1,
                         member_id="", group_instance_id=None, topics=twice)  # fmt: skip
    r = init(side, txn, "init")
    side.request_settled(TXN_OFFSET_COMMIT, 5, "a topic named twice", SETTLING, transactional_id=txn, group_id=g,
                         producer_id=r.producer_id, producer_epoch=r.producer_epoch, generation_id_or_member_epoch=-1,
                         member_id="", group_instance_id=None, topics=twice)  # fmt: skip


@scenario("api")
def metadata_by_name_and_id(side: Side) -> None:
    t, other = side.name(), side.name("other")
    create(side, t, "one partition")
    create(side, other, "another")
    tid = topic_id(side, t)
    flags = dict(allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    for v in (10, 12, 13):
        side.request(METADATA, v, "a name and an id", topics=[{"name": other, "topic_id": None}, {"name": None, "topic_id": tid}], **flags)  # fmt: skip
        side.request(METADATA, v, "a name and an unknown id", topics=[{"name": other, "topic_id": None}, {"name": None, "topic_id": UNKNOWN_ID}], **flags)  # fmt: skip
        side.request(METADATA, v, "an id, then a name", topics=[{"name": None, "topic_id": tid}, {"name": other, "topic_id": None}], **flags)  # fmt: skip
        side.request(METADATA, v, "both on one entry", topics=[{"name": other, "topic_id": tid}], **flags)  # fmt: skip


_BINDING = dict(resource_type=2, resource_name="conformance-acl", resource_pattern_type=3, principal="User:nobody",
                host="*", operation=3, permission_type=3)  # fmt: skip
_FILTER = dict(resource_type_filter=2, resource_name_filter="conformance-acl", pattern_type_filter=3,
               principal_filter="User:nobody", host_filter="*", operation=3, permission_type=3)  # fmt: skip


@scenario("api")
def acls_with_an_unknown_enum(side: Side) -> None:
    """Kafka closes the connection on an UNKNOWN (0) resource type, pattern type, operation or permission
    in CreateAcls and DeleteAcls (the request cannot be read into its types)."""
    for v in (1, 3):
        for field in ("resource_type", "resource_pattern_type", "operation", "permission_type"):
            side.request(CREATE_ACLS, v, f"{field} UNKNOWN", conn=f"create-{v}-{field}",
                         creations=[{**_BINDING, field: 0}])  # fmt: skip
        for field in ("resource_type_filter", "pattern_type_filter", "operation", "permission_type"):
            side.request(DELETE_ACLS, v, f"{field} UNKNOWN", conn=f"delete-{v}-{field}",
                         filters=[{**_FILTER, field: 0}])  # fmt: skip


@scenario("sequence")
def consumer_group_member_without_regex(side: Side) -> None:
    t, g = side.name(), side.name("group")
    create(side, t, "one partition")
    side.request(FIND_COORDINATOR, 4, "group", key_type=0, coordinator_keys=[g])
    member = Member("conformance-member-regex-aaaaaaaaaaa")
    member.take(side.quietly(CG_HEARTBEAT, 1, **member.fields(g, [t])))
    r = side.quietly(CG_DESCRIBE, 1, group_ids=[g], include_authorized_operations=False)
    members = [] if r is None else r.groups[0].members
    side.note("ConsumerGroupDescribe v1 a member subscribed by name", {
        "subscribed_topic_names": [m.subscribed_topic_names for m in members],
        "subscribed_topic_regex": [m.subscribed_topic_regex for m in members],
    })  # fmt: skip
    side.request(CG_HEARTBEAT, 1, "leaves", **Member(member.id, -1).fields(g))
