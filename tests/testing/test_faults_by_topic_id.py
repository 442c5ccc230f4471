"""Fault rules that name a topic match the requests that name it by id (Produce v13, Fetch v13+,
OffsetCommit v10, TxnOffsetCommit v6, Metadata v10+), as they match those that name it: only the
selected partitions get the error, the others are served, and the answer keeps the topic's id."""

from __future__ import annotations

import uuid
from typing import Any

from kafkito.protocol.errors import ErrorCode
from kafkito.testing import KafkitoHandle
from tests.log.helpers import batch
from tests.support.wire import WireClient

NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER


def topic_id(kafkito: KafkitoHandle, name: str) -> uuid.UUID:
    info = kafkito.broker.services.topics.get(name)
    assert info is not None
    return info.topic_id


def errors_by_id(topics: list[Any], partitions: str, index: str) -> dict[Any, dict[int, int]]:
    return {t.topic_id: {getattr(p, index): p.error_code for p in getattr(t, partitions)} for t in topics}


def test_a_produce_v13_by_id_is_faulted_on_the_rule_s_partition_only(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("by-id", partitions=2)
    kafkito.create_topic("elsewhere")
    tid, other = topic_id(kafkito, "by-id"), topic_id(kafkito, "elsewhere")
    fault = kafkito.inject("Produce", "NOT_LEADER_OR_FOLLOWER", count=None, topic="by-id", partition=1)
    data = [
        {"topic_id": tid, "partition_data": [{"index": p, "records": batch(1)} for p in (0, 1)]},
        {"topic_id": other, "partition_data": [{"index": 0, "records": batch(1)}]},
    ]
    with WireClient(kafkito.bootstrap_servers) as wire:
        r = wire.request(0, 13, transactional_id=None, acks=-1, timeout_ms=5000, topic_data=data)
        assert errors_by_id(r.responses, "partition_responses", "index") == {
            tid: {0: 0, 1: NOT_LEADER}, other: {0: 0}
        }  # fmt: skip
        only_faulted = [{"topic_id": tid, "partition_data": [{"index": 1, "records": batch(1)}]}]
        r = wire.request(0, 13, transactional_id=None, acks=-1, timeout_ms=5000, topic_data=only_faulted)
        assert errors_by_id(r.responses, "partition_responses", "index") == {tid: {1: NOT_LEADER}}
    assert fault.fired == 2
    assert kafkito.broker.services.topics.get_log("by-id", 1).log_end_offset == 0


def test_a_fetch_by_id_is_faulted_on_the_rule_s_topic(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("read-by-id", partitions=2)
    tid = topic_id(kafkito, "read-by-id")
    kafkito.inject("Fetch", "NOT_LEADER_OR_FOLLOWER", topic="read-by-id", partition=0)
    part = {"current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1, "log_start_offset": -1,
            "partition_max_bytes": 1 << 20}  # fmt: skip
    with WireClient(kafkito.bootstrap_servers) as wire:
        r = wire.request(
            1, 17, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
            session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
            topics=[{"topic_id": tid, "partitions": [{**part, "partition": p} for p in (0, 1)]}],
        )  # fmt: skip
    assert errors_by_id(r.responses, "partitions", "partition_index") == {tid: {0: NOT_LEADER, 1: 0}}


def _commit_topics(tid: uuid.UUID) -> list[dict[str, Any]]:
    offset = {"committed_offset": 4, "committed_leader_epoch": -1, "committed_metadata": ""}
    parts = [{"partition_index": p, **offset} for p in (0, 1)]
    return [{"name": "", "topic_id": tid, "partitions": parts}]


def test_offset_commits_by_id_are_faulted_on_the_rule_s_partition(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("commits-by-id", partitions=2)
    tid = topic_id(kafkito, "commits-by-id")
    kafkito.inject("OffsetCommit", "TOPIC_AUTHORIZATION_FAILED", topic="commits-by-id", partition=1)
    kafkito.inject("TxnOffsetCommit", "TOPIC_AUTHORIZATION_FAILED", topic="commits-by-id", partition=0)
    denied = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    with WireClient(kafkito.bootstrap_servers) as wire:
        r = wire.request(8, 10, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                         group_instance_id=None, topics=_commit_topics(tid))  # fmt: skip
        assert errors_by_id(r.topics, "partitions", "partition_index") == {tid: {0: 0, 1: denied}}
        txn = wire.request(22, 5, transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1,
                           producer_epoch=-1)  # fmt: skip
        ids = dict(transactional_id="tx", producer_id=txn.producer_id, producer_epoch=txn.producer_epoch)
        assert wire.request(25, 4, **ids, group_id="g").error_code == 0
        r = wire.request(28, 6, **ids, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                         group_instance_id=None, topics=_commit_topics(tid))  # fmt: skip
        assert errors_by_id(r.topics, "partitions", "partition_index") == {tid: {0: denied, 1: 0}}


def test_metadata_asked_by_id_is_faulted_on_the_rule_s_topic(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("described-by-id")
    kafkito.create_topic("described-too")
    tid, other = topic_id(kafkito, "described-by-id"), topic_id(kafkito, "described-too")
    fault = kafkito.inject("Metadata", "LEADER_NOT_AVAILABLE", topic="described-by-id")
    with WireClient(kafkito.bootstrap_servers) as wire:
        flags = dict(allow_auto_topic_creation=False, include_topic_authorized_operations=False)
        r = wire.request(3, 12, topics=[{"name": None, "topic_id": other}], **flags)
        assert fault.fired == 0 and r.topics[0].error_code == 0
        r = wire.request(3, 12, topics=[{"name": None, "topic_id": t} for t in (tid, other)], **flags)
    assert fault.fired == 1
    assert {t.topic_id: t.error_code for t in r.topics} == {tid: ErrorCode.LEADER_NOT_AVAILABLE, other: 0}
