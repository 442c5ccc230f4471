"""Share groups (KIP-932) compared with Kafka 4.4: how ShareFetch, ShareAcknowledge,
ShareGroupHeartbeat and the share-group offset APIs refuse malformed requests, and the share-partition
start offset DescribeShareGroupOffsets reports around a transaction's commit marker."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

import uuid
from typing import Any

import confluent_kafka

from tests.conformance.framework import Side, scenario
from tests.conformance.readiness import config_shown
from tests.conformance.scenarios_admin import create

HEARTBEAT, FETCH, ACKNOWLEDGE, DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 76, 78, 79, 90, 91, 92
INCREMENTAL_ALTER_CONFIGS, METADATA = 44, 3
GROUP = 32  # the GROUP config resource
MEMBER = "AAAAAAAAAAAAAAAAAAAAAA"
ACCEPT = 1


def _fetch_fields(group: str, member: str, epoch: int, topics: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(group_id=group, member_id=member, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
                max_bytes=1 << 20, max_records=500, batch_size=500, topics=topics, forgotten_topics_data=[])  # fmt: skip


def _beat(
    group: str, member: str, epoch: int, topics: list[str] | None, rack: str | None = None
) -> dict[str, Any]:
    return dict(
        group_id=group, member_id=member, member_epoch=epoch, rack_id=rack, subscribed_topic_names=topics
    )


@scenario("sequence")
def share_request_refusals(side: Side) -> None:
    g = side.name("g")
    for group, member, epoch in [
        ("", "", 0),
        (g, "", 0),
        ("", MEMBER, 0),
        (g, MEMBER, 5),
        (g, MEMBER, 0),
        (g, MEMBER, 5),
        (g, MEMBER, -1),
    ]:
        side.request(
            FETCH,
            1,
            f"group {group!r} member {member!r} epoch {epoch}",
            **_fetch_fields(group, member, epoch, []),
        )
    for group, member, epoch in [
        ("", "", 1),
        (g, "", 1),
        (g, MEMBER, 0),
        (g, MEMBER, 1),
        (g, MEMBER, 7),
        (g, MEMBER, -1),
        (g, MEMBER, -1),
    ]:
        side.request(
            ACKNOWLEDGE,
            1,
            f"group {group!r} member {member!r} epoch {epoch}",
            group_id=group,
            member_id=member,
            share_session_epoch=epoch,
            topics=[],
        )
    for group, member, epoch, topics, rack in [
        ("", "", 0, [], None),
        ("", "", -2, None, ""),
        (g, "", 0, ["t"], ""),
        ("", MEMBER, 0, ["t"], None),
        (g, " ", 0, ["t"], None),
        (g, MEMBER, -2, None, ""),
        (g, MEMBER, 0, None, None),
    ]:
        side.request(
            HEARTBEAT,
            1,
            f"group {group!r} member {member!r} epoch {epoch} rack {rack!r}",
            **_beat(group, member, epoch, topics, rack),
        )
    side.request(
        ALTER_OFFSETS,
        0,
        "empty group id",
        group_id="",
        topics=[{"topic_name": "nosuch", "partitions": [{"partition_index": 0, "start_offset": 0}]}],
    )
    side.request(DELETE_OFFSETS, 0, "empty group id", group_id="", topics=[{"topic_name": "nosuch"}])


def _earliest(side: Side, group: str) -> None:
    side.request(INCREMENTAL_ALTER_CONFIGS, 1, "share.auto.offset.reset=earliest", validate_only=False,
                 resources=[{"resource_type": GROUP, "resource_name": group, "configs": [
                     {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}])  # fmt: skip
    side.wait_for("share.auto.offset.reset applied",
                  lambda: config_shown(side.quietly, GROUP, group, "share.auto.offset.reset", "earliest"))  # fmt: skip


def _one_committed_record(side: Side, t: str) -> None:
    """Offset 0: one transactional record; offset 1: its commit marker, written by a real client's
    transaction (a raw batch stamped in 2023 was acquired by Kafka 4.4 without its marker)."""
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": side.bootstrap, "transactional.id": side.name("txn")}
    )
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(t, value=b"only", partition=0)
    producer.commit_transaction(20)
    side.note("committed", True)


class _Member:
    """A share member on one partition, its heartbeats and share-session epochs unrecorded until it
    holds records (Kafka 4.4 assigns in the background and builds share partitions asynchronously).
    Its share session lives on one connection: Kafka's ends with the connection it was opened on."""

    def __init__(self, side: Side, group: str, t: str, topic_id: uuid.UUID) -> None:
        self.side, self.group, self.t, self.topic_id = side, group, t, topic_id
        self.member = str(uuid.uuid4()).replace("-", "")[:22]
        self.epoch = 0  # share session epoch

    def join(self) -> None:
        state = {"epoch": 0}

        def assigned() -> bool:
            topics = [self.t] if state["epoch"] == 0 else None
            r = self.side.quietly(HEARTBEAT, 1, **_beat(self.group, self.member, state["epoch"], topics))
            if r is None or r.error_code:
                return False
            state["epoch"] = r.member_epoch
            return bool(r.assignment and r.assignment.topic_partitions)

        self.side.wait_for("the share assignment", assigned)

    def fetch_until_acquired(self, partition: int = 0) -> None:
        got: list[Any] = []
        partitions = [
            {
                "topic_id": self.topic_id,
                "partitions": [{"partition_index": partition, "acknowledgement_batches": []}],
            }
        ]

        def acquired() -> bool:
            r = self.side.conn(self.group).request(
                FETCH, 1, **_fetch_fields(self.group, self.member, self.epoch, partitions)
            )
            if r is None or r.error_code:
                return False
            self.epoch += 1
            got.extend(
                (a.first_offset, a.last_offset, a.delivery_count)
                for t in r.responses
                for p in t.partitions
                for a in p.acquired_records
            )
            return bool(got)

        self.side.wait_for("records acquired", acquired)
        self.side.note("acquired (first, last, delivery count)", got)

    def acknowledge(
        self, label: str, batches: list[dict[str, Any]], final: bool = False, partition: int = 0
    ) -> None:
        epoch = -1 if final else self.epoch
        self.side.request(ACKNOWLEDGE, 1, label, conn=self.group, group_id=self.group, member_id=self.member, share_session_epoch=epoch,
                          topics=[{"topic_id": self.topic_id, "partitions": [{"partition_index": partition, "acknowledgement_batches": batches}]}] if batches else [])  # fmt: skip
        self.epoch += 1

    def describe(self, label: str) -> None:
        self.side.request(DESCRIBE_OFFSETS, 1, label, groups=[{"group_id": self.group, "topics": None}])

    def leave(self) -> None:
        r = self.side.quietly(HEARTBEAT, 1, **_beat(self.group, self.member, -1, None))
        self.side.note("left the group", None if r is None else r.error_code)


def _topic_id(side: Side, t: str) -> uuid.UUID:
    r = side.quietly(
        METADATA,
        12,
        topics=[{"name": t, "topic_id": None}],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    assert r is not None
    return uuid.UUID(str(r.topics[0].topic_id))


@scenario("sequence")
def share_start_offset_after_commit_marker(side: Side) -> None:
    """A member accepts the only record before a commit marker (the marker, acquired with it, stays
    the member's): the persisted start offset stays 0 after it leaves; a second group's member that
    closes its share session releases the marker, and that write persists start offset 1."""
    t = side.name()
    create(side, t, "topic")
    _one_committed_record(side, t)
    topic_id = _topic_id(side, t)
    for stem, close in (("accept-and-leave", False), ("accept-and-close", True)):
        group = side.name(stem)
        _earliest(side, group)
        member = _Member(side, group, t, topic_id)
        member.join()
        member.fetch_until_acquired()
        member.acknowledge(
            f"{stem}: accept the record",
            [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [ACCEPT]}],
        )
        member.describe(f"{stem}: after the acceptance")
        if close:
            member.acknowledge(f"{stem}: close the share session", [], final=True)
            member.describe(f"{stem}: after the session closed")
        member.leave()
        member.describe(f"{stem}: after the member left")


DESCRIBE_CONFIGS, FETCH_DATA, REJECT, RELEASE = 32, 1, 3, 2
DLQ_CONFIGS = ["errors.deadletterqueue.topic.name", "errors.deadletterqueue.copy.record.enable"]


def _dead_letters(side: Side, dlq: str, partitions: int) -> list[dict[str, Any]]:
    """Every record of the DLQ topic (by partition and offset), without its timestamp (the broker's
    time of writing)."""
    fetched = side.quietly(FETCH_DATA, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
                           topics=[{"topic": dlq, "partitions": [{"partition": p, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                                                                  "log_start_offset": -1, "partition_max_bytes": 1 << 20} for p in range(partitions)]}])  # fmt: skip
    if fetched is None:
        return []
    from kafka.record.memory_records import MemoryRecords

    out = []
    for p in fetched.responses[0].partitions:
        for batch in MemoryRecords(bytes(p.records or b"")):
            out += [
                {
                    "partition": p.partition_index,
                    "offset": r.offset,
                    "key": r.key,
                    "value": r.value,
                    "headers": list(r.headers),
                }
                for r in batch
            ]
    return out


@scenario("sequence")
def share_dead_letter_queue(side: Side) -> None:
    """KIP-1191: a share group naming a DLQ topic (errors.deadletterqueue.topic.name, the topic's
    errors.deadletterqueue.group.enable true, its name under the broker's "dlq." prefix) gets a record
    there for each record a member rejects, and for one released until its delivery count reaches the
    limit (5; a lone record, as Kafka acquires fewer records per fetch as their delivery counts grow);
    errors.deadletterqueue.copy.record.enable copies the key and value. The DLQ record's
    partition is the source partition's modulo the DLQ's partition count."""
    t, dlq = side.name(), side.name("dlq").replace("conf-", "dlq.", 1)
    create(side, t, "source", 3)
    create(side, dlq, "the DLQ topic", 2, errors_deadletterqueue_group_enable="true")
    producer = confluent_kafka.Producer({"bootstrap.servers": side.bootstrap})
    for i in range(3):
        producer.produce(t, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=2, headers=[("h", b"x")])
    producer.produce(t, key=b"poison", value=b"p", partition=1)
    producer.flush(20)
    topic_id = _topic_id(side, t)
    seen = 0
    for stem, copy in (("plain", "false"), ("copy", "true")):
        group = side.name(stem)
        side.request(INCREMENTAL_ALTER_CONFIGS, 1, f"{stem}: a name starting with __", validate_only=True,
                     resources=[{"resource_type": GROUP, "resource_name": group, "configs": [
                         {"name": DLQ_CONFIGS[0], "config_operation": 0, "value": "__dlq"}]}])  # fmt: skip
        side.request(INCREMENTAL_ALTER_CONFIGS, 1, f"{stem}: the DLQ configs", validate_only=False,
                     resources=[{"resource_type": GROUP, "resource_name": group, "configs": [
                         {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"},
                         {"name": DLQ_CONFIGS[0], "config_operation": 0, "value": dlq},
                         {"name": DLQ_CONFIGS[1], "config_operation": 0, "value": copy}]}])  # fmt: skip
        side.wait_for(
            "the DLQ configs applied",
            lambda g=group: config_shown(side.quietly, GROUP, g, DLQ_CONFIGS[0], dlq),
        )
        side.request(DESCRIBE_CONFIGS, 4, f"{stem}: the DLQ configs", include_synonyms=False, include_documentation=False,
                     resources=[{"resource_type": GROUP, "resource_name": group, "configuration_keys": DLQ_CONFIGS}])  # fmt: skip
        member = _Member(side, group, t, topic_id)
        member.join()
        member.fetch_until_acquired(partition=2)
        member.acknowledge(f"{stem}: reject 0 and 2, accept 1", [
            {"first_offset": 0, "last_offset": 0, "acknowledge_types": [REJECT]},
            {"first_offset": 1, "last_offset": 1, "acknowledge_types": [ACCEPT]},
            {"first_offset": 2, "last_offset": 2, "acknowledge_types": [REJECT]}], partition=2)  # fmt: skip
        seen += 2
        side.wait_for("the dead letters", lambda n=seen: len(_dead_letters(side, dlq, 2)) >= n)
    group = side.name("exhausted")
    side.request(INCREMENTAL_ALTER_CONFIGS, 1, "exhausted: the DLQ topic", validate_only=False,
                 resources=[{"resource_type": GROUP, "resource_name": group, "configs": [
                     {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"},
                     {"name": DLQ_CONFIGS[0], "config_operation": 0, "value": dlq}]}])  # fmt: skip
    side.wait_for(
        "the DLQ topic applied", lambda: config_shown(side.quietly, GROUP, group, DLQ_CONFIGS[0], dlq)
    )
    member = _Member(side, group, t, topic_id)
    member.join()
    for attempt in range(1, 6):
        member.fetch_until_acquired(partition=1)
        member.acknowledge(f"exhausted: release the record, delivery {attempt}",
                           [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [RELEASE]}], partition=1)  # fmt: skip
    side.wait_for("the exhausted record's dead letter", lambda: len(_dead_letters(side, dlq, 2)) > seen)
    side.note("the DLQ topic's records", _dead_letters(side, dlq, 2))
