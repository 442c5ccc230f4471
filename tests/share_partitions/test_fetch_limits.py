"""What one ShareFetch may acquire, as Kafka 4.4 decides it: the group's `share.isolation.level`
(read_committed stops at the last stable offset and never gives aborted records), `max_bytes` (0 gives
nothing; a hard limit but for the fetch's first batch; split evenly among the session's partitions),
share partitions read for the first time by a fetch, and the group-config bounds taken from the
broker's `group.share.min/max.*` properties."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkito.testing import KafkitoHandle, start
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

FETCH = 78
GROUP = "limits"


@pytest.fixture
def kafka() -> Iterator[KafkitoHandle]:
    with start(group_share_min_record_lock_duration_ms=3000) as handle:
        handle.create_topic("one", partitions=1)
        handle.create_topic("two", partitions=2)
        yield handle


def set_group_config(kafka: KafkitoHandle, group: str, name: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=10)


def topic_id(kafka: KafkitoHandle, name: str) -> uuid.UUID:
    info = kafka.broker.services.topics.get(name)
    assert info is not None
    return info.topic_id


def produce_batches(kafka: KafkitoHandle, topic: str, count: int, size: int = 100) -> None:
    """`count` records of `size` bytes, one batch each."""
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    for _ in range(count):
        producer.produce(topic, value=b"x" * size, partition=0)
        producer.flush()
    assert producer.flush(10) == 0


def share_fetch(wire: WireClient, member: str, epoch: int, partitions: dict[uuid.UUID, list[int]],
                max_bytes: int, max_records: int = 500) -> Any:  # fmt: skip
    topics = [
        {"topic_id": t, "partitions": [{"partition_index": p, "acknowledgement_batches": []} for p in ps]}
        for t, ps in partitions.items()
    ]
    return wire.request(
        FETCH, 1, group_id=GROUP, member_id=member, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
        max_bytes=max_bytes, max_records=max_records, batch_size=max_records, topics=topics,
        forgotten_topics_data=[],
    )  # fmt: skip


def acquired(response: Any) -> dict[int, list[tuple[int, int]]]:
    return {
        p.partition_index: [(r.first_offset, r.last_offset) for r in p.acquired_records]
        for t in response.responses
        for p in t.partitions
        if p.acquired_records
    }


def test_record_lock_duration_bounds_are_the_brokers(kafka: KafkitoHandle) -> None:
    # group.share.min.record.lock.duration.ms=3000 here (Kafka's default is 15000), as librdkafka's
    # test cluster sets it; the maximum stays Kafka's 60000.
    set_group_config(kafka, "bounded", "share.record.lock.duration.ms", "3000")
    with pytest.raises(Exception, match="between 3000 and 60000"):
        set_group_config(kafka, "bounded", "share.record.lock.duration.ms", "2999")
    with WireClient(kafka.bootstrap_servers) as wire:
        tid = topic_id(kafka, "one")
        opened = wire.request(
            FETCH, 1, group_id="bounded", member_id="m", share_session_epoch=0, max_wait_ms=0, min_bytes=1,
            max_bytes=1 << 20, max_records=10, batch_size=10,
            topics=[{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}],
            forgotten_topics_data=[],
        )  # fmt: skip
    assert opened.acquisition_lock_timeout_ms == 3000


def test_isolation_level_is_a_group_config(kafka: KafkitoHandle) -> None:
    set_group_config(kafka, "iso", "share.isolation.level", "read_committed")
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "iso")])
    entries = next(iter(described.values())).result(timeout=10)
    assert entries["share.isolation.level"].value == "read_committed"
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "other")])
    assert next(iter(described.values())).result(timeout=10)["share.isolation.level"].value == (
        "read_uncommitted"
    )
    with pytest.raises(Exception, match="must be one of"):
        set_group_config(kafka, "iso", "share.isolation.level", "read_everything")


def _transactional_history(kafka: KafkitoHandle) -> confluent_kafka.Producer:
    """On `one`: 50 committed, 20 aborted, 50 committed, then a transaction left open with 10 records,
    and a plain record after it (beyond the last stable offset while that transaction is open)."""
    config = {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": "tx-limits"}
    producer = confluent_kafka.Producer(config)
    producer.init_transactions(10)
    for label, count, commit in (("c1", 50, True), ("ab", 20, False), ("c2", 50, True), ("op", 10, None)):
        producer.begin_transaction()
        for i in range(count):
            producer.produce("one", value=f"{label}-{i}".encode(), partition=0)
        assert producer.flush(10) == 0  # written before the abort (which would purge them unsent)
        if commit is True:
            producer.commit_transaction(10)
        elif commit is False:
            producer.abort_transaction(10)
    plain = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers})
    plain.produce("one", value=b"after-open", partition=0)
    assert plain.flush(10) == 0
    return producer


def _consumer(kafka: KafkitoHandle, group: str) -> confluent_kafka.ShareConsumer:
    c = confluent_kafka.ShareConsumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": group})
    c.subscribe(["one"])
    return c


def test_read_committed_share_consumer_gets_committed_records_up_to_the_last_stable_offset(
    kafka: KafkitoHandle,
) -> None:
    set_group_config(kafka, "rc", "share.auto.offset.reset", "earliest")
    set_group_config(kafka, "rc", "share.isolation.level", "read_committed")
    open_txn = _transactional_history(kafka)
    consumer = _consumer(kafka, "rc")
    seen: list[str] = []

    def poll(count: int) -> bool:
        seen.extend(m.value().decode() for m in consumer.poll(0.5) if m.error() is None)
        return len(seen) >= count

    try:
        wait_until(lambda: poll(100), 30, "the 100 committed records")
        # Nothing of the open transaction, nor what follows it, while it is open.
        assert sorted(seen) == sorted([f"c1-{i}" for i in range(50)] + [f"c2-{i}" for i in range(50)])
        open_txn.abort_transaction(10)
        wait_until(lambda: poll(101), 30, "the record after the aborted transaction")
        assert seen[100:] == ["after-open"]
        assert not any(v.startswith(("ab-", "op-")) for v in seen)
    finally:
        consumer.close()


def test_read_uncommitted_acquires_every_record_and_the_markers_between_them(kafka: KafkitoHandle) -> None:
    """Kafka 4.4 acquires the transaction markers with the records around them (the member
    acknowledges them as GAP): one range over the whole log, none lost before a marker."""
    set_group_config(kafka, GROUP, "share.auto.offset.reset", "earliest")
    open_txn = _transactional_history(kafka)
    plog = kafka.broker.logs.get_log("one", 0)
    end = plog.high_watermark
    markers = 3  # two commits and an abort
    tid = topic_id(kafka, "one")
    with WireClient(kafka.bootstrap_servers) as wire:
        got = acquired(share_fetch(wire, "m", 0, {tid: [0]}, 1 << 20, max_records=1000))[0]
    assert got == [(0, end - 1)]
    assert end == 50 + 20 + 50 + 10 + 1 + markers
    open_txn.abort_transaction(10)


def test_max_bytes_zero_gives_no_records(kafka: KafkitoHandle) -> None:
    set_group_config(kafka, GROUP, "share.auto.offset.reset", "earliest")
    produce_batches(kafka, "one", 3)
    tid = topic_id(kafka, "one")
    with WireClient(kafka.bootstrap_servers) as wire:
        assert acquired(share_fetch(wire, "m", 0, {tid: [0]}, 0)) == {}
        assert acquired(share_fetch(wire, "m", 1, {tid: [0]}, 1 << 20)) == {0: [(0, 2)]}


def test_max_bytes_stops_before_a_batch_that_does_not_fit_but_the_first(kafka: KafkitoHandle) -> None:
    set_group_config(kafka, GROUP, "share.auto.offset.reset", "earliest")
    produce_batches(kafka, "one", 4)
    plog = kafka.broker.logs.get_log("one", 0)
    sizes = [h.size for h in plog.batch_headers()]
    tid = topic_id(kafka, "one")
    with WireClient(kafka.bootstrap_servers) as wire:
        # Less than one batch: the first batch all the same.
        first = share_fetch(wire, "m", 0, {tid: [0]}, 10)
        assert acquired(first) == {0: [(0, 0)]}
        assert len(first.responses[0].partitions[0].records) == sizes[0]
        # Room for one and a half batches: one, not two.
        second = share_fetch(wire, "m", 1, {tid: [0]}, sizes[1] + sizes[2] // 2)
        assert acquired(second) == {0: [(1, 1)]}
        assert acquired(share_fetch(wire, "m", 2, {tid: [0]}, sum(sizes[2:]))) == {0: [(2, 3)]}


def test_max_bytes_is_split_evenly_among_the_partitions(kafka: KafkitoHandle) -> None:
    set_group_config(kafka, GROUP, "share.auto.offset.reset", "earliest")
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    for partition in (0, 1):
        for _ in range(4):
            producer.produce("two", value=b"y" * 100, partition=partition)
            producer.flush()
    size = next(iter(kafka.broker.logs.get_log("two", 0).batch_headers())).size
    tid = topic_id(kafka, "two")
    with WireClient(kafka.bootstrap_servers) as wire:
        share_fetch(wire, "m", 0, {tid: [0, 1]}, 1)  # builds both share partitions; takes p0's first batch
        # Each partition may read half: two batches each, not four from the first.
        got = acquired(share_fetch(wire, "m", 1, {tid: [0, 1]}, 4 * size + 8))
    assert got == {0: [(1, 2)], 1: [(0, 1)]}


def test_a_fetch_that_reads_two_share_partitions_for_the_first_time_gives_one(kafka: KafkitoHandle) -> None:
    """librdkafka's test of 100 records on two partitions gets 50 a poll from Kafka, whose share
    partitions are initialized asynchronously by the first fetch: it answers once one is ready."""
    set_group_config(kafka, GROUP, "share.auto.offset.reset", "earliest")
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(100):
        producer.produce("two", value=b"v%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    consumer = confluent_kafka.ShareConsumer(
        {"bootstrap.servers": kafka.bootstrap_servers, "group.id": GROUP}
    )
    consumer.subscribe(["two"])
    polls: list[list[int]] = []

    def poll() -> bool:
        got = [m.partition() for m in consumer.poll(0.5) if m.error() is None]
        if got:
            polls.append(got)
        return sum(map(len, polls)) >= 100

    try:
        wait_until(poll, 30, "the 100 records")
    finally:
        consumer.close()
    assert [(len(p), len(set(p))) for p in polls] == [(50, 1), (50, 1)]
