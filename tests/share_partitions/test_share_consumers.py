"""confluent-kafka `ShareConsumer`s (librdkafka's KIP-932 client) against kafkito: members sharing one
partition without duplicates (implicit acknowledgement), explicit release and reject (a released record
goes to another member), and a member cut off or SIGKILLed while holding records, whose locks expire
when the broker clock is advanced.

confluent-kafka 2.16's AdminClient has no share-group offset API (no list/alter/delete share group
offsets): tests/share_groups/test_clients.py lists, resets and deletes them with raw requests."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import confluent_kafka
import pytest

from kafkito.testing import KafkitoHandle, start
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

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
        c = consumer(kafka, name, **{"share.acknowledgement.mode": "implicit"})  # the default, said
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


def poll_until(c: confluent_kafka.ShareConsumer, out: list[tuple[int, int]], count: int, what: str) -> None:
    wait_until(lambda: poll_into(c, out) >= count, 30, what)


def test_a_released_record_goes_to_another_member_and_a_rejected_one_to_none(kafka: KafkitoHandle) -> None:
    produce(kafka, 4)
    first = consumer(kafka, "first", **{"share.acknowledgement.mode": "explicit"})
    second: confluent_kafka.ShareConsumer | None = None
    try:
        got: list[tuple[int, int]] = []
        poll_until(first, got, 4, "the first member's four records")
        T = confluent_kafka.AcknowledgeType
        first.acknowledge_offset("tasks", 0, 0, T.RELEASE)
        first.acknowledge_offset("tasks", 0, 1, T.REJECT)
        first.acknowledge_offset("tasks", 0, 2, T.ACCEPT)
        first.acknowledge_offset("tasks", 0, 3, T.ACCEPT)
        first.commit_sync(10)  # `first` stays in the group; it just does not poll again
        second = consumer(kafka, "second", **{"share.acknowledgement.mode": "explicit"})
        again: list[tuple[int, int]] = []
        poll_until(second, again, 1, "the released record at the second member")
        assert again == [(0, 2)]
        second.acknowledge_offset("tasks", 0, 0, T.ACCEPT)
        for _ in range(3):  # a little longer (the acceptance rides on these polls): nothing else comes
            poll_into(second, again, 0.3)
        assert again == [(0, 2)]  # the rejected record is never redelivered
        with WireClient(kafka.bootstrap_servers) as client:  # ShareGroupDescribe: both are members
            (described,) = client.request(
                77, 1, group_ids=[GROUP], include_authorized_operations=False
            ).groups
        assert sorted(m.client_id for m in described.members) == ["first", "second"]
        second.commit_sync(10)
        sp = next(iter(kafka.broker.share.partitions.values()))  # type: ignore[union-attr]
        wait_until(lambda: sp.start_offset == 4, 10, "every record accepted or archived")
    finally:
        first.close()
        if second is not None:
            second.close()


_HOLDER = """
import sys, time
import confluent_kafka
c = confluent_kafka.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                                   "client.id": "holder", "share.acknowledgement.mode": "explicit"})
c.subscribe(["tasks"])
held = 0
while held < int(sys.argv[3]):
    held += sum(1 for m in c.poll(0.5) if m.error() is None)
print(held, flush=True)
time.sleep(3600)  # holds the records, acknowledging none, until killed
"""


def test_records_of_a_killed_member_are_redelivered_once_the_lock_expires(kafka: KafkitoHandle) -> None:
    produce(kafka, 5)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, kafka.bootstrap_servers, GROUP, "5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    other: confluent_kafka.ShareConsumer | None = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "5"
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        other = consumer(kafka, "other")
        redelivered: list[tuple[int, int]] = []
        for _ in range(3):
            poll_into(other, redelivered, 0.3)
        assert redelivered == []  # still locked by the dead member
        kafka.advance(30_000)  # group.share.record.lock.duration.ms, before its session times out (45 s)
        poll_until(other, redelivered, 5, "the killed member's records redelivered")
        other.commit_sync(10)
        assert sorted(redelivered) == [(o, 2) for o in range(5)]
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        if other is not None:
            other.close()
