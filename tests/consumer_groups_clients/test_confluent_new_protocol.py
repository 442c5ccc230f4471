"""confluent-kafka consumers with `group.protocol=consumer` (librdkafka's KIP-848 consumer) on a
`kafkito serve` process: exactly-once consumption through a member leaving, one crashing and one
joining, committed offsets across a broker restart, and the admin client's view of the group."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tests.consumer_groups_clients.members import Got, ProcessMember, ThreadMember
from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.waiting import DEADLINE_S, wait_until

PARTITIONS = 6
TOPIC = "orders"
GROUP = "new-protocol"
# Kafka's minimums are 45 s of session and 5 s between heartbeats; a user lowers them as here so that
# a crashed member is evicted in seconds.
FAST_GROUPS = dict(
    group_consumer_min_session_timeout_ms=2000,
    group_consumer_session_timeout_ms=3000,
    group_consumer_min_heartbeat_interval_ms=200,
    group_consumer_heartbeat_interval_ms=300,
)


class Member(Protocol):
    name: str
    assignment: frozenset[int]

    def records(self) -> list[Got]: ...


def produce(bootstrap: str, batch: int, count: int = 120) -> list[bytes]:
    """`count` records spread over every partition, values unique across batches."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    values = [f"batch{batch}-{i}".encode() for i in range(count)]
    for i, value in enumerate(values):
        producer.produce(TOPIC, value=value, partition=i % PARTITIONS)
    assert producer.flush(DEADLINE_S) == 0
    return values


def consumed(members: Sequence[Member]) -> Counter[bytes]:
    return Counter(value for m in members for _, _, value in m.records())


def wait_consumed(members: Sequence[Member], expected: list[bytes], what: str) -> None:
    def done() -> bool:
        got = consumed(members)
        return all(got[v] >= 1 for v in expected)

    def detail() -> str:
        got = consumed(members)
        missing = [v for v in expected if not got[v]]
        owners = {m.name: sorted(m.assignment) for m in members}
        return f"{len(missing)} missing (e.g. {missing[:3]}); assignments {owners}"

    wait_until(done, DEADLINE_S, what, detail=detail, poll=0.1)


def wait_assignment(members: Sequence[Member], what: str) -> None:
    """Until the members' assignments split all partitions between them, each getting some."""

    def balanced() -> bool:
        parts = [m.assignment for m in members]
        return (
            all(parts)
            and sum(len(p) for p in parts) == PARTITIONS
            and frozenset().union(*parts) == set(range(PARTITIONS))
        )

    wait_until(
        balanced, DEADLINE_S, what, detail=lambda: str({m.name: sorted(m.assignment) for m in members})
    )


def committed(bootstrap: str) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP)])
    return {
        tp.partition: tp.offset
        for tp in listed[GROUP].result(DEADLINE_S).topic_partitions
        if tp.topic == TOPIC
    }


def end_offsets(bootstrap: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets-probe"})
    try:
        return {
            p: c.get_watermark_offsets(TopicPartition(TOPIC, p), DEADLINE_S)[1] for p in range(PARTITIONS)
        }
    finally:
        c.close()


def assert_each_once(members: Sequence[Member], produced: list[bytes]) -> None:
    got = consumed(members)
    twice = {v: n for v, n in got.items() if n > 1}
    assert not twice, f"consumed more than once: {list(twice.items())[:5]}"
    assert set(got) == set(produced)


def test_members_leave_crash_and_join_each_record_once(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process(**FAST_GROUPS)
    bootstrap = broker.bootstrap
    create_topic(bootstrap, TOPIC, PARTITIONS)
    a = ThreadMember(bootstrap, GROUP, TOPIC, "member-a").start()
    b = ThreadMember(bootstrap, GROUP, TOPIC, "member-b").start()
    c = ProcessMember(bootstrap, GROUP, TOPIC, "member-c")
    members: list[Any] = [a, b, c]
    threads = [a, b]
    try:
        wait_assignment(members, "three members sharing the six partitions")
        produced = produce(bootstrap, 1)
        wait_consumed(members, produced, "the first batch")

        a.stop()  # leaves the group (epoch -1): its partitions go to the others at once
        threads.remove(a)
        produced += produce(bootstrap, 2)
        wait_consumed(members, produced, "the batch produced while a member left")
        wait_assignment([b, c], "the two remaining members sharing the partitions")

        c.kill()  # no leave: evicted once its session times out
        produced += produce(bootstrap, 3)
        wait_consumed(members, produced, "the batch produced after a member crashed")
        wait_assignment([b], "the survivor owning every partition")

        d = ThreadMember(bootstrap, GROUP, TOPIC, "member-d").start()
        threads.append(d)
        members.append(d)
        wait_assignment([b, d], "the joining member taking its share")
        produced += produce(bootstrap, 4)
        wait_consumed(members, produced, "the batch produced after a member joined")

        assert_each_once(members, produced)
        ends = end_offsets(bootstrap)
        wait_until(lambda: committed(bootstrap) == ends, DEADLINE_S, "the committed offsets at the log end",
                   detail=lambda: f"committed {committed(bootstrap)}, ends {ends}")  # fmt: skip
        assert_described_as_consumer_group(bootstrap, {"member-b", "member-d"})
    finally:
        for t in threads:
            t.stop()
        if c.proc.poll() is None:
            c.kill()


def assert_described_as_consumer_group(bootstrap: str, client_ids: set[str]) -> None:
    """The admin client describes and lists the group as a KIP-848 consumer group."""
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def described() -> Any:
        return admin.describe_consumer_groups([GROUP])[GROUP].result(DEADLINE_S)

    group = wait_until(
        lambda: (d := described()).state == ConsumerGroupState.STABLE and d, DEADLINE_S, "a stable group"
    )
    assert group.type == ConsumerGroupType.CONSUMER
    assert not group.is_simple_consumer_group
    assert group.partition_assignor == "uniform"
    assert {m.client_id for m in group.members} == client_ids
    owned = [tp.partition for m in group.members for tp in m.assignment.topic_partitions]
    assert sorted(owned) == list(range(PARTITIONS))
    consumers = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(DEADLINE_S)
    assert GROUP in {g.group_id for g in consumers.valid}
    assert all(g.type == ConsumerGroupType.CONSUMER for g in consumers.valid)
    classics = admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(DEADLINE_S)
    assert GROUP not in {g.group_id for g in classics.valid}


def test_committed_offsets_survive_a_broker_restart(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process(**FAST_GROUPS)
    bootstrap = broker.bootstrap
    create_topic(bootstrap, TOPIC, PARTITIONS)
    a = ThreadMember(bootstrap, GROUP, TOPIC, "member-a").start()
    b = ThreadMember(bootstrap, GROUP, TOPIC, "member-b").start()
    members = [a, b]
    try:
        wait_assignment(members, "two members sharing the partitions")
        produced = produce(bootstrap, 1)
        wait_consumed(members, produced, "the records produced before the restart")
        before = end_offsets(bootstrap)
        wait_until(lambda: committed(bootstrap) == before, DEADLINE_S, "everything committed")

        broker.restart()
        assert committed(bootstrap) == before
        produced += produce(bootstrap, 2)
        wait_consumed(members, produced, "the records produced after the restart")
        assert_each_once(members, produced)
        after = end_offsets(bootstrap)
        wait_until(
            lambda: committed(bootstrap) == after, DEADLINE_S, "everything committed after the restart"
        )
    finally:
        for m in members:
            m.stop()
