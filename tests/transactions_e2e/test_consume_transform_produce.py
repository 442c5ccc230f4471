"""Consume-transform-produce: a group consumer reads, a transactional producer writes the transformed
records and sends the consumer's offsets to the transaction. The offsets are pending until the
commit (OffsetFetch shows the old ones, and UNSTABLE_OFFSET_COMMIT with require_stable), become the
group's committed offsets on commit, and are dropped on abort with the output records."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Got, Rec, got_from_message, got_from_record
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.bounded import bounded
from tests.transactions_e2e.logview import UNSTABLE_OFFSET_COMMIT, offset_fetch, plain_produce
from tests.transactions_e2e.producers import PRODUCERS, make_producer, txn_id
from tests.transactions_e2e.readers import append_sentinels, read, values_of

PARTITIONS = 2


class GroupReader:
    """A read_committed group member of `client` (manual commits), polled by the test."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str) -> None:
        self.client = client
        self.got: list[Got] = []
        if client == "confluent-kafka":
            from confluent_kafka import Consumer

            self.consumer: Any = Consumer({
                "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
            })  # fmt: skip
            self.consumer.subscribe([topic])
        else:
            from kafka import KafkaConsumer

            self.consumer = bounded(
                lambda: KafkaConsumer(
                    bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                    isolation_level="read_committed", auto_offset_reset="earliest",
                    session_timeout_ms=6000, heartbeat_interval_ms=500, request_timeout_ms=30_000,
                ),
                "creating kafka-python's consumer",
            )  # fmt: skip
            self.consumer.partitions_for_topic(topic)  # see tests/compat/clients/kafka_python_client.py
            self.consumer.subscribe([topic])

    def poll(self) -> list[Got]:
        if self.client == "confluent-kafka":
            msgs = self.consumer.consume(num_messages=500, timeout=0.2)
            errors = [str(m.error()) for m in msgs if m.error() is not None]
            assert not errors, f"consumer errors {errors[:3]}"
            self.got += [got_from_message(m) for m in msgs]
        else:
            batch = self.consumer.poll(timeout_ms=200)
            self.got += [got_from_record(m) for msgs in batch.values() for m in msgs]
        return self.got

    def read(self, n: int) -> None:
        wait_until(lambda: len(self.poll()) >= n, DEADLINE_S, f"{n} input records consumed",
                   detail=lambda: f"consumed {len(self.got)}")  # fmt: skip
        assert len(self.got) == n, f"consumed {len(self.got)} records, {n} were produced"

    def positions(self, topic: str) -> dict[tuple[str, int], int]:
        """The next offset to consume in each partition: what the transaction commits."""
        out: dict[tuple[str, int], int] = {}
        for g in self.got:
            out[(topic, g.partition)] = max(out.get((topic, g.partition), 0), g.offset + 1)
        return out

    def committed(self, topic: str) -> dict[int, int]:
        """The group's committed offsets, asked through the client (a read_committed consumer asks
        with require_stable where the client supports it)."""
        if self.client == "confluent-kafka":
            from confluent_kafka import TopicPartition

            tps = self.consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], DEADLINE_S)
            return {tp.partition: tp.offset for tp in tps}
        from kafka import TopicPartition as KafkaTopicPartition

        return {p: self.consumer.committed(KafkaTopicPartition(topic, p)) for p in range(PARTITIONS)}

    def group_metadata(self) -> Any:
        if self.client == "confluent-kafka":
            return self.consumer.consumer_group_metadata()
        return self.consumer.group_metadata()

    def close(self) -> None:
        bounded(self.consumer.close, f"closing {self.client}'s consumer")


def transform(g: Got) -> Rec:
    return Rec(g.partition, g.key, (g.value or b"").upper())


@pytest.mark.parametrize("client", PRODUCERS)
def test_offsets_sent_to_a_transaction_are_committed_with_it(client: str, broker: ThreadBroker) -> None:
    bootstrap, source, sink, group = (
        broker.bootstrap,
        f"ctp-in-{client}",
        f"ctp-out-{client}",
        f"ctp-{client}",
    )
    create_topic(bootstrap, source, PARTITIONS)
    create_topic(bootstrap, sink, PARTITIONS)
    plain_produce(bootstrap, source, [Rec(i % PARTITIONS, None, f"round1-{i}".encode()) for i in range(20)])
    producer = make_producer(client, bootstrap, txn_id())
    reader = GroupReader(client, bootstrap, group, source)

    def committed(require_stable: bool) -> dict[int, tuple[int, int]]:
        return offset_fetch(bootstrap, group, source, PARTITIONS, require_stable)

    try:
        producer.init()
        reader.read(20)
        round1 = [transform(g) for g in reader.got]
        first = reader.positions(source)
        producer.begin()
        producer.send(sink, round1)
        producer.send_offsets(first, reader.group_metadata())
        assert committed(False) == dict.fromkeys(range(PARTITIONS), (0, -1)), "offsets visible before commit"
        pending = committed(True)
        assert all(error == UNSTABLE_OFFSET_COMMIT for error, _ in pending.values()), (
            f"require_stable: {pending}"
        )
        producer.commit()
        want = {p: (0, first[(source, p)]) for p in range(PARTITIONS)}
        wait_until(  # the offsets are committed by the marker, which may follow EndTxn's answer
            lambda: committed(True) == want,
            DEADLINE_S,
            "the offsets committed",
            detail=lambda: f"{committed(True)}",
        )
        assert committed(False) == want
        by_client = bounded(lambda: reader.committed(source), f"{client}'s committed()")
        assert by_client == {p: o for p, (_, o) in want.items()}, (
            f"{client} reads committed offsets {by_client}"
        )

        # Round 2 is aborted: its output and its offsets go.
        plain_produce(
            bootstrap, source, [Rec(i % PARTITIONS, None, f"round2-{i}".encode()) for i in range(10)]
        )
        reader.read(30)
        round2 = [transform(g) for g in reader.got[20:]]
        producer.begin()
        producer.send(sink, round2)
        producer.send_offsets(reader.positions(source), reader.group_metadata())
        producer.abort()
        wait_until(
            lambda: committed(True) == want,
            DEADLINE_S,
            "the aborted offsets dropped",
            detail=lambda: f"{committed(True)}",
        )
        assert bounded(lambda: reader.committed(source), f"{client}'s committed()") == by_client
    finally:
        reader.close()
        producer.close()

    append_sentinels(bootstrap, sink, PARTITIONS, "end")
    output = read(client, bootstrap, sink, PARTITIONS, "read_committed", "end").values()
    assert output == values_of(round1, PARTITIONS)
    output = read("aiokafka", bootstrap, sink, PARTITIONS, "read_uncommitted", "end").values()
    assert output == values_of(round1 + round2, PARTITIONS)
