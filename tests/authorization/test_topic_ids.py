"""Requests that name topics by id (Produce v13, Fetch v13+, OffsetCommit/OffsetFetch v10, TxnOffsetCommit
v6) are authorized by the name the id resolves to, as Kafka 4.4 answers them (measured against it with
StandardAuthorizer and a SCRAM user): a topic the principal may not use is TOPIC_AUTHORIZATION_FAILED, an
id no topic has (or the zero id) UNKNOWN_TOPIC_ID whatever the ACLs, and a topic it may use is served."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AclOperation, ResourceType

from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker
from tests.authorization.test_confluent import create_topic
from tests.authorization.test_wire import allow
from tests.log.helpers import batch
from tests.support.wire import WireClient

TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED
UNKNOWN_ID_ERROR = ErrorCode.UNKNOWN_TOPIC_ID
UNKNOWN_ID = uuid.UUID("0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f")
ZERO_ID = uuid.UUID(int=0)


@pytest.fixture
def ids(secured: AclBroker) -> dict[str, uuid.UUID]:
    """Topics `open` and `closed` (no ACL for User:ANONYMOUS yet) and their ids."""
    found = {}
    for name in ("open", "closed"):
        create_topic(secured, name)
        assert secured.thread.broker is not None
        info = secured.thread.broker.services.topics.get(name)
        assert info is not None
        found[name] = info.topic_id
    return found


def by_id(topics: list[Any], partitions: str) -> dict[uuid.UUID | None, list[int]]:
    return {t.topic_id: [p.error_code for p in getattr(t, partitions)] for t in topics}


def produce_v13(wire: WireClient, topic_ids: list[uuid.UUID]) -> dict[uuid.UUID | None, list[int]]:
    data = [{"topic_id": t, "partition_data": [{"index": 0, "records": batch(1)}]} for t in topic_ids]
    r = wire.request(0, 13, transactional_id=None, acks=-1, timeout_ms=5000, topic_data=data)
    return by_id(r.responses, "partition_responses")


def test_produce_v13_by_id_needs_write_on_the_topic(secured: AclBroker, ids: dict[str, uuid.UUID]) -> None:
    with WireClient(secured.plaintext) as wire:
        assert produce_v13(wire, [ids["open"]]) == {ids["open"]: [TAF]}
        allow(secured, ResourceType.TOPIC, "open", AclOperation.WRITE)
        answered = produce_v13(wire, [ids["open"], ids["closed"], UNKNOWN_ID])
        assert answered == {ids["open"]: [0], ids["closed"]: [TAF], UNKNOWN_ID: [UNKNOWN_ID_ERROR]}
        assert produce_v13(wire, [ZERO_ID]) == {None: [UNKNOWN_ID_ERROR]}


def test_fetch_by_id_needs_read_on_the_topic(secured: AclBroker, ids: dict[str, uuid.UUID]) -> None:
    allow(secured, ResourceType.TOPIC, "open", AclOperation.WRITE)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    part = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}  # fmt: skip
    with WireClient(secured.plaintext) as wire:
        assert produce_v13(wire, [ids["open"]]) == {ids["open"]: [0]}
        r = wire.request(
            1, 17, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
            session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
            topics=[{"topic_id": t, "partitions": [part]} for t in (ids["open"], ids["closed"], UNKNOWN_ID)],
        )  # fmt: skip
    assert by_id(r.responses, "partitions") == {
        ids["open"]: [0], ids["closed"]: [TAF], UNKNOWN_ID: [UNKNOWN_ID_ERROR]
    }  # fmt: skip
    assert next(t for t in r.responses if t.topic_id == ids["open"]).partitions[0].records


def _commit_topics(topic_ids: list[uuid.UUID], offset: int) -> list[dict[str, Any]]:
    partition = {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
                 "committed_metadata": "m"}  # fmt: skip
    return [{"name": "", "topic_id": t, "partitions": [partition]} for t in topic_ids]


def test_group_offsets_by_id_need_the_topic(secured: AclBroker, ids: dict[str, uuid.UUID]) -> None:
    allow(secured, ResourceType.GROUP, "g", AclOperation.READ)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    asked = [ids["open"], ids["closed"], UNKNOWN_ID]
    with WireClient(secured.plaintext) as wire:
        commit = wire.request(
            8, 10, group_id="g", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
            topics=_commit_topics(asked, 7),
        )  # fmt: skip
        expected = {ids["open"]: [0], ids["closed"]: [TAF], UNKNOWN_ID: [UNKNOWN_ID_ERROR]}
        assert by_id(commit.topics, "partitions") == expected
        listed = [{"name": "", "topic_id": t, "partition_indexes": [0]} for t in asked]
        group = {"group_id": "g", "member_id": None, "member_epoch": -1}
        fetched = wire.request(9, 10, require_stable=False, groups=[{**group, "topics": listed}]).groups[0]
        assert fetched.error_code == 0
        assert by_id(fetched.topics, "partitions") == expected
        offsets = {t.topic_id: [p.committed_offset for p in t.partitions] for t in fetched.topics}
        assert offsets == {ids["open"]: [7], ids["closed"]: [-1], UNKNOWN_ID: [-1]}
        everything = wire.request(9, 10, require_stable=False, groups=[{**group, "topics": None}]).groups[0]
        assert by_id(everything.topics, "partitions") == {ids["open"]: [0]}


def test_txn_offset_commit_v6_by_id_needs_the_topic(secured: AclBroker, ids: dict[str, uuid.UUID]) -> None:
    allow(secured, ResourceType.GROUP, "g", AclOperation.READ)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    allow(secured, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
    with WireClient(secured.plaintext) as wire:
        txn = wire.request(
            22, 5, transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
        )
        assert txn.error_code == 0
        pid, epoch = txn.producer_id, txn.producer_epoch
        fields = dict(transactional_id="tx", producer_id=pid, producer_epoch=epoch, group_id="g")
        added = wire.request(25, 4, **fields)
        assert added.error_code == 0
        fields.update(generation_id_or_member_epoch=-1, member_id="", group_instance_id=None)

        r = wire.request(28, 6, **fields, topics=_commit_topics([ids["open"], ids["closed"], UNKNOWN_ID], 3))
    assert by_id(r.topics, "partitions") == {
        ids["open"]: [0], ids["closed"]: [TAF], UNKNOWN_ID: [UNKNOWN_ID_ERROR]
    }  # fmt: skip


def test_metadata_by_id_needs_describe_on_the_topic(secured: AclBroker, ids: dict[str, uuid.UUID]) -> None:
    allow(secured, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
    asked = [{"name": None, "topic_id": t} for t in (ids["open"], ids["closed"], UNKNOWN_ID)]
    with WireClient(secured.plaintext) as wire:
        r = wire.request(
            3, 12, topics=asked, allow_auto_topic_creation=False, include_topic_authorized_operations=False
        )
    assert {t.topic_id: t.error_code for t in r.topics} == {
        ids["open"]: 0, ids["closed"]: TAF, UNKNOWN_ID: UNKNOWN_ID_ERROR
    }  # fmt: skip
