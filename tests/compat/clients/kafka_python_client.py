"""kafka-python: blocking clients, each consumer loop in a thread of the test process."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from tests.compat.clients.base import (
    HEARTBEAT_INTERVAL_MS,
    RECONNECT_BACKOFF_MAX_MS,
    SESSION_TIMEOUT_MS,
    Consumer,
    Driver,
    GroupView,
    ThreadConsumer,
    TopicView,
    TxnStep,
)
from tests.compat.records import Got, Rec
from tests.support.kafka_python import subscribe
from tests.support.produce import send_kafka_python
from tests.support.records import got_from_record
from tests.transactions_e2e.bounded import bounded

COMMON: dict[str, Any] = {"reconnect_backoff_max_ms": RECONNECT_BACKOFF_MAX_MS, "request_timeout_ms": 30_000}


def _assignor(name: str) -> Any:
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    return {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[name]


class _Reader(ThreadConsumer):
    def __init__(self, bootstrap: str, topic: str, partitions: int, start: str) -> None:
        super().__init__(f"kafka-python-reader-{topic}")
        self.args = (bootstrap, topic, partitions, start)

    def run(self) -> None:
        from kafka import KafkaConsumer, TopicPartition

        bootstrap, topic, partitions, start = self.args
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **COMMON)
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(tps)
            if start == "earliest":
                consumer.seek_to_beginning(*tps)
            else:
                consumer.seek_to_end(*tps)
            for tp in tps:
                consumer.position(tp)  # resolves the logical offset now
            self.feed.assigned(range(partitions))
            self.feed.ready.set()
            while not self.stopping.is_set():
                for msgs in consumer.poll(timeout_ms=100).values():
                    for m in msgs:
                        self.feed.add(got_from_record(m))
        finally:
            consumer.close()


class _Member(ThreadConsumer):
    def __init__(self, bootstrap: str, group: str, topic: str, name: str, assignor: str) -> None:
        super().__init__(name)
        self.args = (bootstrap, group, topic, assignor)

    def run(self) -> None:
        from kafka import ConsumerRebalanceListener, KafkaConsumer

        bootstrap, group, topic, assignor = self.args
        feed = self.feed

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                feed.group_revoked(tp.partition for tp in revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                feed.group_assigned(tp.partition for tp in assigned)

        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, client_id=self.name,
            partition_assignment_strategy=[_assignor(assignor)],
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            enable_auto_commit=False, auto_offset_reset="earliest", **COMMON,
        )  # fmt: skip
        try:
            subscribe(consumer, [topic], Listener())  # around two kafka-python join bugs
            while not self.stopping.is_set():
                batch = consumer.poll(timeout_ms=100)
                for msgs in batch.values():
                    for m in msgs:
                        feed.add(got_from_record(m))
                if batch:
                    consumer.commit()  # synchronous: the records above are processed
        finally:
            consumer.close()  # leaves the group


class KafkaPythonDriver(Driver):
    name = "kafka-python"
    not_applicable = {
        "consumer-protocol": "not supported by the client: kafka-python 3.0 has only the classic group "
        "protocol (JoinGroup/SyncGroup, client-side assignors)",
        "share-group": "not supported by the client: kafka-python 3.0 has no share consumer (KIP-932)",
    }
    notes = {
        scenario: "members fetch the topic's metadata after subscribing and before the first poll: "
        "kafka-python 3.0.12 otherwise rejoins once after assigning and can lose a join that completes "
        "after poll() timed out (a client bug; see tests/support/kafka_python.py)"
        for scenario in ("group-rebalance", "broker-restart")
    }

    @property
    def version(self) -> str:
        import kafka

        return str(kafka.__version__)

    def _admin(self, bootstrap: str) -> Any:
        from kafka import KafkaAdminClient

        return KafkaAdminClient(bootstrap_servers=bootstrap, **COMMON)

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, **COMMON)
        try:
            partitions = producer.partitions_for(topic)  # the producer's metadata path
        finally:
            producer.close()
        admin = self._admin(bootstrap)
        try:
            cluster = admin.describe_cluster()
            described = admin.describe_topics([topic])
        finally:
            admin.close()
        (t,) = described
        leaders = {p["partition_index"]: p["leader_id"] for p in t["partitions"]}
        assert set(leaders) == set(partitions), f"producer saw {partitions}, admin {leaders}"
        brokers = [(b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"]]
        return TopicView(brokers, leaders, cluster["cluster_id"])

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        admin = self._admin(bootstrap)
        try:
            admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
        finally:
            admin.close()

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        admin = self._admin(bootstrap)
        try:
            admin.delete_topics([topic])
        finally:
            admin.close()

    def list_topics(self, bootstrap: str) -> set[str]:
        admin = self._admin(bootstrap)
        try:
            return set(admin.list_topics())
        finally:
            admin.close()

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", linger_ms=20,
            compression_type=None if codec == "none" else codec, **COMMON,
        )  # fmt: skip
        try:
            send_kafka_python(producer, topic, recs)
        finally:
            producer.close()

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        return _Reader(bootstrap, topic, partitions, start)

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return _Member(bootstrap, group, topic, name, assignor)

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **COMMON
        )
        try:
            tps = {p: TopicPartition(topic, p) for p in offsets}
            consumer.assign(list(tps.values()))
            consumer.commit({tps[p]: OffsetAndMetadata(o, f"meta-{p}", -1) for p, o in offsets.items()})
            out = {}
            for p, tp in tps.items():
                meta = consumer.committed(tp, metadata=True)
                assert meta is not None and meta.metadata == f"meta-{p}", f"partition {p}: {meta}"
                out[p] = meta.offset
        finally:
            consumer.close()
        admin = self._admin(bootstrap)
        try:
            listed = admin.list_group_offsets({group: None})[group]
        finally:
            admin.close()
        by_admin = {tp.partition: om.offset for tp, om in listed.items() if tp.topic == topic}
        assert by_admin == out, f"admin saw {by_admin}, consumer {out}"
        return out

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        admin = self._admin(bootstrap)
        try:
            listed = admin.list_groups()
            described = admin.describe_groups([group])
        finally:
            admin.close()
        return _group_view(group, listed, described)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=5, max_block_ms=30_000,
            **COMMON,
        )  # fmt: skip
        try:  # kafka-python's commit and abort wait without a timeout of their own: each call is bounded
            bounded(producer.init_transactions, "init_transactions")
            for step in steps:
                bounded(partial(self._one_transaction, producer, topic, step), "a transaction")
        finally:
            bounded(lambda: producer.close(timeout=5), "closing the producer")

    @staticmethod
    def _one_transaction(producer: Any, topic: str, step: TxnStep) -> None:
        from kafka import OffsetAndMetadata, TopicPartition

        producer.begin_transaction()
        send_kafka_python(producer, topic, step.records)
        if step.group is not None and step.offsets:
            offsets = {
                TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in step.offsets.items()
            }
            producer.send_offsets_to_transaction(offsets, step.group)
        if step.commit:
            producer.commit_transaction()
        else:
            producer.abort_transaction()

    def old_protocol(self, bootstrap: str, topic: str, recs: Sequence[Rec]) -> list[Got]:
        from kafka import KafkaConsumer, KafkaProducer, TopicPartition

        old = {"api_version": (0, 10, 0), **COMMON}  # no ApiVersions: Produce v2, Fetch v2-3
        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, **old)
        try:
            futures = [producer.send(topic, key=r.key, value=r.value, partition=r.partition) for r in recs]
            producer.flush(timeout=30)
            for f in futures:
                f.get(timeout=30)
        finally:
            producer.close()
        partitions = sorted({r.partition for r in recs})
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **old)
        got: list[Got] = []
        try:
            consumer.assign([TopicPartition(topic, p) for p in partitions])
            consumer.seek_to_beginning()
            for _ in range(120):  # a bound for a hung client, never a performance threshold
                if len(got) >= len(recs):
                    break
                for msgs in consumer.poll(timeout_ms=500).values():
                    got += [got_from_record(m) for m in msgs]
        finally:
            consumer.close()
        return got


def _group_view(group: str, listed: Any, described: Any) -> GroupView:
    names = {g["group_id"] if isinstance(g, dict) else g[0] for g in listed}
    g = described[group]
    members = []
    for m in g["members"]:
        assignment = m["member_assignment"]
        parts = {t["topic"]: sorted(t["partitions"]) for t in assignment["assigned_partitions"]}
        members.append((m["client_id"], parts))
    return GroupView(group in names, g["protocol_type"], g["group_state"], g["protocol_data"], members)
