"""confluent-kafka `ShareConsumer`s (librdkafka's KIP-932 client) against kafkito: members sharing one
partition without duplicates, explicit release and reject, and a member cut off while holding records
whose locks expire when the broker clock is advanced."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import confluent_kafka
import pytest

from kafkito.testing import KafkitoHandle, start
from tests.support.waiting import wait_until

GROUP = "workers"


@pytest.fixture
def kafka() -> Iterator[KafkitoHandle]:
    with start() as handle:
        handle.create_topic("tasks", partitions=1)
        configs = handle.broker.coordinator.share_group_configs
        handle.call(lambda: configs.set(GROUP, "share.auto.offset.reset", "earliest"))
        yield handle


def produce(kafka: KafkitoHandle, count: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 5})
    for i in range(count):
        producer.produce("tasks", value=b"task-%d" % i)
    assert producer.flush(30) == 0


def consumer(kafka: KafkitoHandle, name: str, **extra: str) -> confluent_kafka.ShareConsumer:
    c = confluent_kafka.ShareConsumer(
        {"bootstrap.servers": kafka.bootstrap_servers, "group.id": GROUP, "client.id": name, **extra}
    )
    c.subscribe(["tasks"])
    return c


def poll_into(c: confluent_kafka.ShareConsumer, out: list[tuple[int, int]], timeout: float = 0.5) -> int:
    """One poll; its records' (offset, delivery count) appended to `out`; how many `out` holds now."""
    out.extend((m.offset(), m.delivery_count()) for m in c.poll(timeout) if m.error() is None)
    return len(out)


def test_two_members_share_400_records_without_duplicates(kafka: KafkitoHandle) -> None:
    produce(kafka, 400)
    seen: dict[str, list[int]] = {"a": [], "b": []}
    done = threading.Event()

    def work(name: str) -> None:
        c = consumer(kafka, name)
        try:
            while not done.is_set():
                for m in c.poll(0.5):
                    if m.error() is None:
                        seen[name].append(m.offset())
            c.commit_sync(10)
        finally:
            c.close()

    threads = [threading.Thread(target=work, args=(name,)) for name in seen]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: len(seen["a"]) + len(seen["b"]) >= 400, 60, "400 records consumed")
    finally:
        done.set()
        for t in threads:
            t.join(30)
    every = seen["a"] + seen["b"]
    assert sorted(every) == list(range(400))  # each record once, to one member
    sp = next(iter(kafka.broker.share.partitions.values()))  # type: ignore[union-attr]
    wait_until(lambda: sp.start_offset == 400, 10, "every record acknowledged")


def test_explicit_release_is_redelivered_and_reject_is_not(kafka: KafkitoHandle) -> None:
    produce(kafka, 4)
    first = consumer(kafka, "first", **{"share.acknowledgement.mode": "explicit"})
    got: list[tuple[int, int]] = []
    wait_until(lambda: poll_into(first, got) >= 4, 30, "four records")
    types = {0: confluent_kafka.AcknowledgeType.RELEASE, 1: confluent_kafka.AcknowledgeType.REJECT}
    for offset, _ in got:
        first.acknowledge_offset(
            "tasks", 0, offset, types.get(offset, confluent_kafka.AcknowledgeType.ACCEPT)
        )
    first.commit_sync(10)
    first.close()
    second = consumer(kafka, "second")
    again: list[tuple[int, int]] = []
    try:
        wait_until(
            lambda: (
                bool(
                    again.extend(
                        (m.offset(), m.delivery_count()) for m in second.poll(0.5) if m.error() is None
                    )
                )
                or bool(again)
            ),
            30,
            "the released record",
        )
        for _ in range(3):  # a little longer: nothing else may come
            again.extend((m.offset(), m.delivery_count()) for m in second.poll(0.3) if m.error() is None)
        second.commit_sync(10)
    finally:
        second.close()
    assert again == [(0, 2)]


def test_records_of_a_member_cut_off_are_redelivered_once_the_lock_expires(kafka: KafkitoHandle) -> None:
    produce(kafka, 5)
    holder = consumer(kafka, "holder", **{"share.acknowledgement.mode": "explicit"})
    held: list[tuple[int, int]] = []
    wait_until(lambda: poll_into(holder, held) >= 5, 30, "the holder's records")
    kafka.blackhole("holder")  # it can neither acknowledge nor release them
    other = consumer(kafka, "other")
    redelivered: list[tuple[int, int]] = []
    try:
        for _ in range(2):
            assert [m for m in other.poll(0.3) if m.error() is None] == []  # locked: nothing for others
        kafka.advance(30_000)  # group.share.record.lock.duration.ms
        wait_until(
            lambda: (
                bool(
                    redelivered.extend(
                        (m.offset(), m.delivery_count()) for m in other.poll(0.5) if m.error() is None
                    )
                )
                or len(redelivered) >= 5
            ),
            30,
            "redelivery",
        )
        other.commit_sync(10)
    finally:
        other.close()
        kafka.unblackhole("holder")
        holder.close()
    assert redelivered == [(o, 2) for o in range(5)]
