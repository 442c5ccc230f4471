"""The versions Kafka 4.4 added to APIs kafkito already served, over the wire: topics named by id in
Produce v13, Fetch v18, OffsetCommit/OffsetFetch v10 and TxnOffsetCommit v6 (an id no topic has is
UNKNOWN_TOPIC_ID), ListOffsets v11's earliest pending upload (-6), Metadata v13's top-level error
code, DeleteGroups v3's message, DescribeLogDirs v5 and DescribeCluster v2; and the feature levels of
a fresh Kafka 4.4 cluster. tests/conformance/scenarios_kafka44.py compares the same with Kafka 4.4."""

# ruff: noqa: E501 - requests are written as tables of their fields

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker import features
from kafkito.protocol.errors import ErrorCode
from kafkito.protocol.kafka_releases import FEATURES as RELEASE_FEATURES
from tests.conformance.batches import batch
from tests.conftest import make_config
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

E = ErrorCode
UNKNOWN_ID = uuid.UUID("0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f")
TOPIC = "orders"


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WireClient, uuid.UUID]]:
    broker = ThreadBroker(make_config(tmp_path_factory.mktemp("kafka44"))).start()
    client = WireClient(broker.bootstrap)
    client.request(19, 5, topics=[dict(name=TOPIC, num_partitions=2, replication_factor=1, assignments=[],
                                       configs=[])], timeout_ms=5000, validate_only=False)  # fmt: skip
    meta = client.request(3, 13, topics=[dict(name=TOPIC, topic_id=uuid.UUID(int=0))],
                          allow_auto_topic_creation=False, include_topic_authorized_operations=False)  # fmt: skip
    yield client, meta.topics[0].topic_id
    client.close()
    broker.stop()


def _by_partition(topics: Any, parts: str) -> dict[tuple[Any, int], int]:
    return {(t.topic_id, p.partition_index if hasattr(p, "partition_index") else p.index): p.error_code
            for t in topics for p in getattr(t, parts)}  # fmt: skip


def test_produce_v13_and_fetch_v18_name_topics_by_id(wire: tuple[WireClient, uuid.UUID]) -> None:
    client, tid = wire
    records = batch([b"a", b"b"])
    produced = client.request(0, 13, transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        dict(topic_id=tid, partition_data=[dict(index=0, records=records), dict(index=7, records=records)]),
        dict(topic_id=UNKNOWN_ID, partition_data=[dict(index=0, records=records)])])  # fmt: skip
    assert _by_partition(produced.responses, "partition_responses") == {
        (tid, 0): E.NONE,
        (tid, 7): E.UNKNOWN_TOPIC_OR_PARTITION,
        (UNKNOWN_ID, 0): E.UNKNOWN_TOPIC_ID,
    }
    part = dict(partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=-1,
                partition_max_bytes=1 << 20)  # fmt: skip
    fetched = client.request(1, 18, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                             session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                             topics=[dict(topic_id=tid, partitions=[part]), dict(topic_id=UNKNOWN_ID, partitions=[part])])  # fmt: skip
    assert [(r.topic_id, r.partitions[0].error_code) for r in fetched.responses] == [
        (tid, E.NONE),
        (UNKNOWN_ID, E.UNKNOWN_TOPIC_ID),
    ]
    assert fetched.responses[0].partitions[0].high_watermark >= 2


def test_list_offsets_v11_earliest_pending_upload_and_metadata_v13(
    wire: tuple[WireClient, uuid.UUID],
) -> None:
    client, _ = wire

    def pending_upload(version: int) -> tuple[int, int]:
        r = client.request(2, version, replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[
            dict(name=TOPIC, partitions=[dict(partition_index=0, current_leader_epoch=-1, timestamp=-6)])])  # fmt: skip
        p = r.topics[0].partitions[0]
        return p.error_code, p.offset

    assert pending_upload(10) == (E.UNSUPPORTED_VERSION, -1)
    assert pending_upload(11) == (E.NONE, -1)  # nothing waits for remote storage
    meta = client.request(3, 13, topics=[dict(name=None, topic_id=UNKNOWN_ID)], allow_auto_topic_creation=False,
                          include_topic_authorized_operations=False)  # fmt: skip
    assert meta.error_code == E.NONE
    assert [(t.topic_id, t.error_code) for t in meta.topics] == [(UNKNOWN_ID, E.UNKNOWN_TOPIC_ID)]


def test_group_offsets_v10_and_txn_offset_commit_v6_by_id(wire: tuple[WireClient, uuid.UUID]) -> None:
    client, tid = wire
    group = "kafka44-group"
    client.request(10, 4, key_type=0, coordinator_keys=[group])

    def part(p: int, offset: int) -> dict[str, Any]:
        return dict(
            partition_index=p, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="m"
        )

    topics = [
        dict(topic_id=tid, partitions=[part(0, 5), part(3, 1)]),
        dict(topic_id=UNKNOWN_ID, partitions=[part(0, 1)]),
    ]
    committed = client.request(8, 10, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                               group_instance_id=None, topics=topics)  # fmt: skip
    assert _by_partition(committed.topics, "partitions") == {
        (tid, 0): E.NONE,
        (tid, 3): E.UNKNOWN_TOPIC_OR_PARTITION,
        (UNKNOWN_ID, 0): E.UNKNOWN_TOPIC_ID,
    }
    listed = [dict(topic_id=tid, partition_indexes=[0, 1]), dict(topic_id=UNKNOWN_ID, partition_indexes=[0])]
    fetched = client.request(9, 10, require_stable=False, groups=[
        dict(group_id=group, member_id=None, member_epoch=-1, topics=listed),
        dict(group_id=group, member_id=None, member_epoch=-1, topics=None)])  # fmt: skip
    offsets = [{(t.topic_id, p.partition_index): (p.committed_offset, p.error_code) for t in g.topics
                for p in t.partitions} for g in fetched.groups]  # fmt: skip
    assert offsets == [
        {(tid, 0): (5, E.NONE), (tid, 1): (-1, E.NONE), (UNKNOWN_ID, 0): (-1, E.UNKNOWN_TOPIC_ID)},
        {(tid, 0): (5, E.NONE)},
    ]
    client.request(10, 4, key_type=1, coordinator_keys=["kafka44-txn"])
    pid = client.request(22, 5, transactional_id="kafka44-txn", transaction_timeout_ms=60_000, producer_id=-1,
                         producer_epoch=-1)  # fmt: skip
    assert pid.error_code == E.NONE
    txn = client.request(28, 6, transactional_id="kafka44-txn", group_id=group, producer_id=pid.producer_id,
                         producer_epoch=pid.producer_epoch, generation_id_or_member_epoch=-1, member_id="",
                         group_instance_id=None, topics=topics)  # fmt: skip
    assert _by_partition(txn.topics, "partitions") == {
        (tid, 0): E.NONE,
        (tid, 3): E.UNKNOWN_TOPIC_OR_PARTITION,
        (UNKNOWN_ID, 0): E.UNKNOWN_TOPIC_ID,
    }


def test_delete_groups_v3_log_dirs_v5_and_cluster_v2(wire: tuple[WireClient, uuid.UUID]) -> None:
    client, _ = wire
    deleted = client.request(42, 3, groups_names=["never-seen"])
    assert [(r.group_id, r.error_code, r.error_message) for r in deleted.results] == [
        ("never-seen", E.GROUP_ID_NOT_FOUND, None)
    ]
    dirs = client.request(35, 5, topics=None)
    assert [(r.error_code, r.is_cordoned) for r in dirs.results] == [(E.NONE, False)]
    cluster = client.request(60, 2, include_cluster_authorized_operations=False, endpoint_type=1,
                             include_fenced_brokers=True)  # fmt: skip
    assert [b.is_fenced for b in cluster.brokers] == [False]


def test_feature_levels_are_a_fresh_kafka_44_clusters(tmp_path: Path) -> None:
    assert tuple(features.FEATURES) == tuple(RELEASE_FEATURES[features.LATEST_RELEASE] or ())
    finalized = {f["name"]: f["max_version_level"] for f in features.finalized_features()}
    assert finalized == {
        "metadata.version": 33, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
        "eligible.leader.replicas.version": 1, "share.version": 2, "streams.version": 1,
    }  # fmt: skip
