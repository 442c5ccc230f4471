"""The versions Kafka 4.4 added to APIs kafkito already served (issue 30): topics named by id on the
data path (Produce v13, Fetch v18) and in a group's offsets (OffsetCommit/OffsetFetch v10,
TxnOffsetCommit v6), ListOffsets v11's earliest pending upload, Metadata v13's top-level error code,
DeleteGroups v3, DescribeLogDirs v5, DescribeCluster v2, and the feature levels ApiVersions reports
and UpdateFeatures checks. Each sends a known topic id, an id no topic has and the zero id."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

import uuid
from typing import Any

from tests.conformance.batches import batch
from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create
from tests.conformance.scenarios_txn import END_TXN, SETTLING, init

PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH = 0, 1, 2, 3, 8, 9
FIND_COORDINATOR, API_VERSIONS, TXN_OFFSET_COMMIT, DESCRIBE_LOG_DIRS = 10, 18, 28, 35
DELETE_GROUPS, UPDATE_FEATURES, DESCRIBE_CLUSTER = 42, 57, 60

# Not a topic's id on either broker (ids are random 128-bit values).
UNKNOWN_ID = uuid.UUID("0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f")
ZERO_ID = uuid.UUID(int=0)


def topic_id(side: Side, t: str) -> uuid.UUID:
    """The topic's id on this side's broker, from a Metadata v13 answer (recorded)."""
    r = side.request(METADATA, 13, "the topic by name", topics=[{"name": t, "topic_id": ZERO_ID}],
                     allow_auto_topic_creation=False, include_topic_authorized_operations=False)  # fmt: skip
    found: uuid.UUID = r.topics[0].topic_id
    return found


def _fetch_partition(p: int, offset: int = 0) -> dict[str, Any]:
    return {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}  # fmt: skip


@scenario("api")
def topic_ids_data_path(side: Side) -> None:
    t = side.name()
    create(side, t, "two partitions", 2)
    tid = topic_id(side, t)
    side.request(METADATA, 13, "by id, known and unknown", topics=[{"name": None, "topic_id": tid}, {"name": None, "topic_id": UNKNOWN_ID}],
                 allow_auto_topic_creation=False, include_topic_authorized_operations=True)  # fmt: skip
    records = batch([b"a", b"b"])
    for label, topic, partitions in (
        ("a known id", tid, [0, 1, 7]),
        ("an unknown id", UNKNOWN_ID, [0, 1]),
        ("the zero id", ZERO_ID, [0]),
    ):
        side.request(PRODUCE, 13, label, transactional_id=None, acks=-1, timeout_ms=5000,
                     topic_data=[{"topic_id": topic, "partition_data": [{"index": p, "records": records} for p in partitions]}])  # fmt: skip
    side.request(PRODUCE, 13, "acks 2", transactional_id=None, acks=2, timeout_ms=5000,
                 topic_data=[{"topic_id": tid, "partition_data": [{"index": 0, "records": records}]}, {"topic_id": UNKNOWN_ID, "partition_data": [{"index": 0, "records": records}]}])  # fmt: skip
    for v in (17, 18):
        side.request(FETCH, v, "a known id, an unknown one", replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                     isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                     topics=[{"topic_id": tid, "partitions": [_fetch_partition(0), _fetch_partition(1, 5), _fetch_partition(9)]},
                             {"topic_id": UNKNOWN_ID, "partitions": [_fetch_partition(0)]}])  # fmt: skip
    for v, partitions in ((10, ((0, -6), (1, -5))), (11, ((0, -6), (1, -1)))):
        side.request(LIST_OFFSETS, v, "earliest pending upload", replica_id=-1, isolation_level=0, timeout_ms=1000,
                     topics=[{"name": t, "partitions": [{"partition_index": p, "current_leader_epoch": -1, "timestamp": ts} for p, ts in partitions]}])  # fmt: skip
    side.request(LIST_OFFSETS, 11, "a topic that does not exist", replica_id=-1, isolation_level=0, timeout_ms=1000,
                 topics=[{"name": side.name("missing"), "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -6}]}])  # fmt: skip


def _commit_topics(tid: uuid.UUID, name: str) -> list[dict[str, Any]]:
    """A known topic (an unknown partition too), an unknown id and the zero id; below the id versions,
    the known topic's name and two names no topic has."""

    def part(p: int, offset: int) -> dict[str, Any]:
        return {
            "partition_index": p,
            "committed_offset": offset,
            "committed_leader_epoch": -1,
            "committed_metadata": "m",
        }

    return [{"name": name, "topic_id": tid, "partitions": [part(0, 1), part(1, 2), part(5, 3)]},
            {"name": "gone", "topic_id": UNKNOWN_ID, "partitions": [part(0, 4)]},
            {"name": "gone-too", "topic_id": ZERO_ID, "partitions": [part(1, 5)]}]  # fmt: skip


@scenario("sequence")
def topic_ids_group_offsets(side: Side) -> None:
    t, g, empty = side.name(), side.name("group"), side.name("never")
    create(side, t, "two partitions", 2)
    tid = topic_id(side, t)
    side.find_coordinator(0, g, "group")
    side.request_settled(OFFSET_COMMIT, 10, "a known id, an unknown one, the zero id", group_id=g,
                         generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                         topics=_commit_topics(tid, t))  # fmt: skip
    side.request(OFFSET_COMMIT, 10, "an unknown member", group_id=g, generation_id_or_member_epoch=3,
                 member_id="ghost", group_instance_id=None, topics=_commit_topics(tid, t))  # fmt: skip
    for v in (9, 10):
        listed = [{"name": t, "topic_id": tid, "partition_indexes": [0, 1, 9]},
                  {"name": "gone", "topic_id": UNKNOWN_ID, "partition_indexes": [0]}]  # fmt: skip
        side.request(OFFSET_FETCH, v, "listed topics", require_stable=True, groups=[
            {"group_id": g, "member_id": None, "member_epoch": -1, "topics": listed},
            {"group_id": empty, "member_id": None, "member_epoch": -1, "topics": listed}])  # fmt: skip
        side.request(OFFSET_FETCH, v, "every topic", require_stable=False, groups=[
            {"group_id": g, "member_id": None, "member_epoch": -1, "topics": None},
            {"group_id": empty, "member_id": None, "member_epoch": -1, "topics": None}])  # fmt: skip
    for v in (2, 3):
        side.request(
            DELETE_GROUPS,
            v,
            "the group, one never seen, an empty id",
            groups_names=[g, side.name(f"never-{v}"), ""],
        )
    side.request(OFFSET_FETCH, 10, "after the deletion", require_stable=False, groups=[
        {"group_id": g, "member_id": None, "member_epoch": -1, "topics": None}])  # fmt: skip


@scenario("sequence")
def txn_offset_commit_topic_ids(side: Side) -> None:
    t, txn, g = side.name(), side.name("txn"), side.name("group")
    create(side, t, "two partitions", 2)
    tid = topic_id(side, t)
    r = init(side, txn, "init")
    pid, epoch = r.producer_id, r.producer_epoch
    side.find_coordinator(0, g, "group")
    for v in (5, 6):
        side.request_settled(TXN_OFFSET_COMMIT, v, "a known id, an unknown one, the zero id", SETTLING,
                             transactional_id=txn, group_id=g, producer_id=pid, producer_epoch=epoch,
                             generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                             topics=_commit_topics(tid, t))  # fmt: skip
    for v in (5, 6):
        side.request(TXN_OFFSET_COMMIT, v, "an old epoch", transactional_id=txn, group_id=g, producer_id=pid,
                     producer_epoch=epoch - 1 if epoch > 0 else 32767, generation_id_or_member_epoch=-1, member_id="",
                     group_instance_id=None, topics=_commit_topics(tid, t))  # fmt: skip
    side.request_settled(END_TXN, 5, "commit", SETTLING, transactional_id=txn, producer_id=pid, producer_epoch=epoch, committed=True)  # fmt: skip
    side.wait_for("the committed offsets", lambda: _committed(side, g))
    side.request(OFFSET_FETCH, 10, "after the commit", require_stable=True, groups=[
        {"group_id": g, "member_id": None, "member_epoch": -1, "topics": None}])  # fmt: skip


def _committed(side: Side, g: str) -> bool:
    r = side.quietly(OFFSET_FETCH, 9, require_stable=True,
                     groups=[{"group_id": g, "member_id": None, "member_epoch": -1, "topics": None}])  # fmt: skip
    return r is not None and bool(r.groups[0].topics)


@scenario("api")
def cluster_and_log_dirs_kafka44(side: Side) -> None:
    t = side.name()
    create(side, t, "one partition")
    for fenced in (False, True):
        side.request(DESCRIBE_CLUSTER, 2, f"include fenced {fenced}", include_cluster_authorized_operations=True,
                     endpoint_type=1, include_fenced_brokers=fenced)  # fmt: skip
    side.request(DESCRIBE_CLUSTER, 2, "controllers", include_cluster_authorized_operations=False, endpoint_type=2,
                 include_fenced_brokers=True)  # fmt: skip
    for v in (4, 5):
        side.request(DESCRIBE_LOG_DIRS, v, "the topic and one that does not exist",
                     topics=[{"topic": t, "partitions": [0, 3]}, {"topic": side.name("missing"), "partitions": [0]}])  # fmt: skip


@scenario("api")
def feature_levels(side: Side) -> None:
    """ApiVersions' feature levels (v3 leaves out supported features whose minimum is 0; its API ranges
    are compared by sweep-18), and UpdateFeatures checking updates it only validates (the session's
    brokers keep their levels)."""
    for v in (3, 4):
        r = side.quietly(API_VERSIONS, v, client_software_name="conformance", client_software_version="1.0")
        side.note(f"ApiVersions v{v} feature levels", {
            "supported_features": [{"name": f.name, "min_version": f.min_version, "max_version": f.max_version} for f in r.supported_features],
            "finalized_features": [{"name": f.name, "min_version_level": f.min_version_level, "max_version_level": f.max_version_level} for f in r.finalized_features],
            "finalized_features_epoch": r.finalized_features_epoch,
        })  # fmt: skip
    updates = (
        ("every feature at its level", [("metadata.version", 33, 1), ("kraft.version", 1, 1), ("transaction.version", 2, 1),
                                        ("group.version", 1, 1), ("share.version", 2, 1), ("streams.version", 1, 1),
                                        ("eligible.leader.replicas.version", 1, 1)]),
        ("safe downgrades", [("share.version", 1, 2), ("streams.version", 0, 2), ("group.version", 0, 2)]),
        ("share.version 3", [("share.version", 3, 1)]),
        ("streams.version 2", [("streams.version", 2, 1)]),
        ("eligible.leader.replicas.version 0", [("eligible.leader.replicas.version", 0, 2)]),
        ("metadata.version 34", [("metadata.version", 34, 1)]),
        ("an unknown feature", [("no.such.version", 1, 1)]),
    )  # fmt: skip
    for label, wanted in updates:
        side.request(UPDATE_FEATURES, 2, label, timeout_ms=5000, validate_only=True,
                     feature_updates=[{"feature": f, "max_version_level": level, "upgrade_type": kind} for f, level, kind in wanted])  # fmt: skip


@scenario("api")
def api_versions_intended_node(side: Side) -> None:
    """ApiVersions v5 (KIP-1242) naming the cluster and node the client means to reach: this node, another
    cluster or node (REBOOTSTRAP_REQUIRED), one of the two alone (INVALID_REQUEST), and a bad software
    name with another cluster (INVALID_REQUEST: the name is checked first). The API ranges of an answer
    with no error are compared by sweep-18."""
    cluster_id = side.quietly(DESCRIBE_CLUSTER, 2, include_cluster_authorized_operations=False, endpoint_type=1,
                              include_fenced_brokers=False).cluster_id  # fmt: skip
    for label, software, cluster, node in (
        ("this node", "conformance", cluster_id, 1),
        ("another cluster", "conformance", "AAAAAAAAAAAAAAAAAAAAAA", 1),
        ("another node", "conformance", cluster_id, 2),
        ("an empty cluster id", "conformance", "", 1),
        ("the cluster alone", "conformance", cluster_id, -1),
        ("the node alone", "conformance", None, 1),
        ("a bad software name and another cluster", "-bad", "AAAAAAAAAAAAAAAAAAAAAA", 1),
    ):
        r = side.quietly(API_VERSIONS, 5, client_software_name=software, client_software_version="1.0",
                         cluster_id=cluster, node_id=node)  # fmt: skip
        side.note(f"ApiVersions v5 {label}", {  # what is listed is compared by sweep-18 and feature_levels
            "error_code": r.error_code, "throttle_time_ms": r.throttle_time_ms, "lists api keys": bool(r.api_keys),
            "lists features": bool(r.supported_features), "lists finalized features": bool(r.finalized_features),
            "finalized_features_epoch": r.finalized_features_epoch if r.error_code else ">= 0",
        })  # fmt: skip
