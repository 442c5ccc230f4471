"""What librdkafka's own tests found kafkito answering unlike Kafka (issue 27), compared with Kafka 4.4:
offsets committed, fetched and deleted by a consumer outside any group (an `assign()`ing consumer that
names its own member id with generation or epoch -1), for a group that does not exist, an empty classic
group and a KIP-848 group with a member; and a Produce batch with keyless records on a compacted topic,
answered per record (KIP-467's `record_errors` and `error_message`)."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.conformance.batches import BASE_TS
from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create
from tests.conformance.scenarios_consumer_groups import Member, join
from tests.conformance.scenarios_txn import SETTLING, init

PRODUCE, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, OFFSET_DELETE, TXN_OFFSET_COMMIT = 0, 8, 9, 10, 47, 28


def _topics(t: str, offset: int) -> list[dict[str, Any]]:
    return [{"name": t, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                        "committed_leader_epoch": -1, "committed_metadata": "outside"}]}]  # fmt: skip


def _commits(side: Side, g: str, t: str, what: str) -> None:
    """OffsetCommit v8 and v9 with generation -1, without and with a member id of the client's own."""
    for version in (8, 9):
        for member in ("", "assigned-consumer-1"):
            side.request_settled(OFFSET_COMMIT, version, f"{what}, member {member or 'none'}", group_id=g,
                                 generation_id_or_member_epoch=-1, member_id=member, group_instance_id=None,
                                 topics=_topics(t, 5 + version))  # fmt: skip


def _fetch(side: Side, g: str, t: str, what: str) -> None:
    for member, epoch in ((None, -1), ("assigned-consumer-1", -1)):
        side.request_settled(OFFSET_FETCH, 9, f"{what}, member {member}", require_stable=True,
                             groups=[{"group_id": g, "member_id": member, "member_epoch": epoch,
                                      "topics": [{"name": t, "partition_indexes": [0]}]}])  # fmt: skip


@scenario("sequence")
def offsets_outside_any_group(side: Side) -> None:
    t = side.name()
    create(side, t, "one partition", 1)
    missing, classic, consumer = side.name("missing"), side.name("classic"), side.name("consumer")
    side.request(FIND_COORDINATOR, 4, "groups", key_type=0, coordinator_keys=[missing, classic, consumer])
    _commits(side, missing, t, "a group that does not exist")
    _commits(side, classic, t, "an empty group")  # the first commit made it a group that only stores offsets
    _fetch(side, classic, t, "an empty group")
    m = Member(side.name("member"))
    join(side, consumer, m, [t], "a KIP-848 member", first=True)
    _commits(side, consumer, t, "a KIP-848 group with a member")
    _fetch(side, consumer, t, "a KIP-848 group with a member")
    txn = side.name("txn")
    r = init(side, txn, "init")
    side.request_settled(TXN_OFFSET_COMMIT, 4, "generation -1, a member id of its own", SETTLING, transactional_id=txn,
                         group_id=classic, producer_id=r.producer_id, producer_epoch=r.producer_epoch,
                         generation_id_or_member_epoch=-1, member_id="assigned-consumer-1", group_instance_id=None,
                         topics=[{"name": t, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                             "committed_leader_epoch": -1, "committed_metadata": ""}]}])  # fmt: skip
    side.request_settled(OFFSET_DELETE, 0, "an empty group", group_id=classic,
                         topics=[{"name": t, "partitions": [{"partition_index": 0}]}])  # fmt: skip
    side.request_settled(OFFSET_DELETE, 0, "a group that does not exist", group_id=side.name("never"),
                         topics=[{"name": t, "partitions": [{"partition_index": 0}]}])  # fmt: skip


def _keys_batch(keys: list[bytes | None]) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i, key in enumerate(keys):
        builder.append(i, timestamp=BASE_TS + i, key=key, value=b"v%d" % i, headers=[])
    return bytes(builder.build())


@scenario("api")
def produce_record_errors(side: Side) -> None:
    t = side.name()
    create(side, t, "compacted", 1, cleanup_policy="compact")
    keys: list[bytes | None] = [b"k%d" % i if i % 3 else None for i in range(10)]
    for version in (7, 8, 9):
        side.request(PRODUCE, version, "keyless records on a compacted topic", transactional_id=None, acks=-1,
                     timeout_ms=5000,
                     topic_data=[{"name": t, "partition_data": [{"index": 0, "records": _keys_batch(keys)}]}])  # fmt: skip
    side.request(PRODUCE, 9, "every record keyed", transactional_id=None, acks=-1, timeout_ms=5000,
                 topic_data=[{"name": t, "partition_data": [{"index": 0, "records": _keys_batch([b"a", b"b"])}]}])  # fmt: skip
