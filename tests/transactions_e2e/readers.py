"""Reading a topic back with confluent-kafka, kafka-python or aiokafka at either isolation level.

A read runs until the reader has seen a sentinel record in every partition: a value appended by a
plain producer after everything the test checks, so that having seen it proves the reader got past
every record and control batch before it (and, with read_committed, that no transaction before it
is still open). The records before the sentinels are returned, by partition."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable

from tests.support.records import Got, Rec, got_from_message, got_from_record
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.bounded import bounded
from tests.transactions_e2e.logview import plain_produce

CLIENTS = ("confluent-kafka", "kafka-python", "aiokafka")
ISOLATIONS = ("read_committed", "read_uncommitted")


def sentinel(tag: str) -> bytes:
    return f"--sentinel {tag}--".encode()


def append_sentinels(bootstrap: str, topic: str, partitions: int, tag: str) -> None:
    plain_produce(bootstrap, topic, [Rec(p, None, sentinel(tag)) for p in range(partitions)])


class Collector:
    """Records by partition up to the sentinel `tag` in each."""

    def __init__(self, partitions: int, tag: str) -> None:
        self.stop = sentinel(tag)
        self.by_partition: dict[int, list[Got]] = {p: [] for p in range(partitions)}
        self.done: set[int] = set()

    def take(self, records: Iterable[Got]) -> bool:
        for g in records:
            if g.partition in self.done:
                continue
            if g.value == self.stop:
                self.done.add(g.partition)
            elif not (g.value or b"").startswith(b"--sentinel "):
                self.by_partition[g.partition].append(g)
        return len(self.done) == len(self.by_partition)

    def values(self) -> dict[int, list[bytes | None]]:
        return {p: [g.value for g in gots] for p, gots in self.by_partition.items()}

    def state(self) -> str:
        counts = {p: len(v) for p, v in self.by_partition.items()}
        return f"records so far by partition {counts}, sentinel seen in {sorted(self.done)}"


def read(client: str, bootstrap: str, topic: str, partitions: int, isolation: str, tag: str) -> Collector:
    """Everything `client` delivers from the beginning of `topic` at `isolation`, up to the sentinels
    `tag` (which the caller has appended, or appends while this waits)."""
    collector = Collector(partitions, tag)
    what = f"{client} ({isolation}) to read {topic} up to sentinel {tag!r}"
    if client == "confluent-kafka":
        _read_confluent(bootstrap, topic, isolation, collector, what)
    elif client == "kafka-python":
        _read_kafka_python(bootstrap, topic, isolation, collector, what)
    elif client == "aiokafka":
        asyncio.run(
            asyncio.wait_for(_read_aiokafka(bootstrap, topic, isolation, collector, what), DEADLINE_S * 2)
        )
    else:
        raise AssertionError(f"unknown client {client}")
    return collector


def _read_confluent(bootstrap: str, topic: str, isolation: str, collector: Collector, what: str) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}", "enable.auto.commit": False,
        "isolation.level": isolation,
    })  # fmt: skip
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in collector.by_partition])

        def step() -> bool:
            msgs = consumer.consume(num_messages=500, timeout=0.2)
            errors = [str(m.error()) for m in msgs if m.error() is not None]
            assert not errors, f"{what}: {errors[:3]}"
            return collector.take(got_from_message(m) for m in msgs)

        wait_until(step, DEADLINE_S, what, detail=collector.state, poll=0)
    finally:
        consumer.close()


def _read_kafka_python(bootstrap: str, topic: str, isolation: str, collector: Collector, what: str) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation,
        request_timeout_ms=30_000, reconnect_backoff_max_ms=1000,
    )  # fmt: skip
    try:
        tps = [TopicPartition(topic, p) for p in collector.by_partition]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)

        def step() -> bool:
            batch = consumer.poll(timeout_ms=200)
            return collector.take(got_from_record(m) for msgs in batch.values() for m in msgs)

        wait_until(step, DEADLINE_S, what, detail=collector.state, poll=0)
    finally:
        bounded(lambda: consumer.close(), f"closing kafka-python's reader of {topic}")


async def _read_aiokafka(bootstrap: str, topic: str, isolation: str, collector: Collector, what: str) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation,
        request_timeout_ms=30_000, retry_backoff_ms=100,
    )  # fmt: skip
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in collector.by_partition]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE_S
        while True:
            batch = await consumer.getmany(timeout_ms=200)
            if collector.take(got_from_record(m) for msgs in batch.values() for m in msgs):
                return
            if loop.time() > deadline:
                raise AssertionError(
                    f"timed out after {DEADLINE_S:.0f} s waiting for {what}\n  {collector.state()}"
                )
    finally:
        await consumer.stop()


def values_of(recs: Iterable[Rec], partitions: int) -> dict[int, list[bytes | None]]:
    """The values `recs` put in each partition, in order."""
    out: dict[int, list[bytes | None]] = {p: [] for p in range(partitions)}
    for r in recs:
        out[r.partition].append(r.value)
    return out
