"""An open transaction holds back read_committed readers of its partitions, and everything after it
there (records of a plain producer included), until it ends; other partitions flow on."""

from __future__ import annotations

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Got, Rec, got_from_message
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.logview import high_watermarks, plain_produce, stable_offsets, wait_settled
from tests.transactions_e2e.producers import make_producer, txn_id
from tests.transactions_e2e.readers import Collector, append_sentinels, read, values_of

PARTITIONS = 2  # the transaction writes to partition 0 only


def recs(name: str, n: int, partitions: tuple[int, ...]) -> list[Rec]:
    return [Rec(partitions[i % len(partitions)], None, f"{name}-{i}".encode()) for i in range(n)]


class LiveReader:
    """A read_committed confluent-kafka consumer of every partition, polled by the test itself."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"live-{topic}", "enable.auto.commit": False,
            "isolation.level": "read_committed", "fetch.wait.max.ms": 100,
        })  # fmt: skip
        self.consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.got: list[Got] = []

    def poll(self) -> list[Got]:
        msgs = self.consumer.consume(num_messages=500, timeout=0.2)
        errors = [str(m.error()) for m in msgs if m.error() is not None]
        assert not errors, f"read_committed reader: {errors[:3]}"
        self.got += [got_from_message(m) for m in msgs]
        return self.got

    def values(self, partition: int) -> list[bytes | None]:
        return [g.value for g in self.got if g.partition == partition]

    def state(self) -> str:
        return f"read so far {[g.value for g in self.got]}"

    def close(self) -> None:
        self.consumer.close()


@pytest.mark.parametrize("outcome", ["commit", "abort"])
def test_open_transaction_holds_back_read_committed_until_it_ends(outcome: str, broker: ThreadBroker) -> None:
    bootstrap, topic = broker.bootstrap, f"held-back-{outcome}"
    create_topic(bootstrap, topic, PARTITIONS)
    before = recs("before", 6, (0, 1))
    plain_produce(bootstrap, topic, before)
    producer = make_producer("confluent-kafka", bootstrap, txn_id())
    reader = LiveReader(bootstrap, topic)
    try:
        producer.init()
        producer.begin()
        in_txn = recs("in-txn", 5, (0,))
        producer.send(topic, in_txn)
        after = recs("after", 6, (0, 1))  # a plain producer, after the transaction began
        plain_produce(bootstrap, topic, after)

        first_txn_offset = sum(1 for r in before if r.partition == 0)
        ends = high_watermarks(bootstrap, topic, PARTITIONS)
        assert stable_offsets(bootstrap, topic, PARTITIONS) == {0: first_txn_offset, 1: ends[1]}

        # Partition 1's later records arrive: the reader has fetched both partitions since they
        # were written. Partition 0 stops before the open transaction.
        want_1 = values_of(before + after, PARTITIONS)[1]
        wait_until(
            lambda: reader.poll() and reader.values(1) == want_1,
            DEADLINE_S,
            "partition 1 read to its end",
            detail=reader.state,
        )
        for _ in range(3):  # a few more fetches, on purpose: nothing of partition 0 may come through
            reader.poll()
        assert reader.values(0) == values_of(before, PARTITIONS)[0], (
            "read_committed passed an open transaction"
        )

        if outcome == "commit":
            producer.commit()
        else:
            producer.abort()
        wait_settled(bootstrap, topic, PARTITIONS)

        append_sentinels(bootstrap, topic, PARTITIONS, "end")
        wait_until(
            lambda: Collector(PARTITIONS, "end").take(reader.poll()),
            DEADLINE_S,
            "the rest, once the transaction ended",
            detail=reader.state,
        )
        collector = Collector(PARTITIONS, "end")
        collector.take(reader.got)
    finally:
        reader.close()
        producer.close()

    kept = in_txn if outcome == "commit" else []
    assert collector.values() == values_of(before + kept + after, PARTITIONS)
    # Read from scratch, the same.
    again = read("kafka-python", bootstrap, topic, PARTITIONS, "read_committed", "end")
    assert again.values() == values_of(before + kept + after, PARTITIONS)
