"""confluent-kafka (librdkafka): poll-based clients, each consumer loop in a thread of the test process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.compat.clients.base import (
    HEARTBEAT_INTERVAL_MS,
    RECONNECT_BACKOFF_MAX_MS,
    SESSION_TIMEOUT_MS,
    Consumer,
    Driver,
    GroupView,
    ShareAcks,
    ThreadConsumer,
    TopicView,
    TxnStep,
)
from tests.compat.records import Got, Rec
from tests.support.produce import send_confluent
from tests.support.records import got_from_message

TIMEOUT_S = 30.0


def _conf(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "reconnect.backoff.max.ms": RECONNECT_BACKOFF_MAX_MS, **extra}


class _Reader(ThreadConsumer):
    def __init__(self, bootstrap: str, topic: str, partitions: int, start: str) -> None:
        super().__init__(f"confluent-reader-{topic}")
        self.args = (bootstrap, topic, partitions, start)

    def run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition

        bootstrap, topic, partitions, start = self.args
        # A group id is required by the API even though assign() never joins the group.
        consumer = Consumer(
            _conf(bootstrap, **{"group.id": f"reader-{topic}", "enable.auto.commit": False,
                                "enable.partition.eof": True})
        )  # fmt: skip
        try:
            offset = OFFSET_BEGINNING if start == "earliest" else OFFSET_END
            consumer.assign([TopicPartition(topic, p, offset) for p in range(partitions)])
            self.feed.assigned(range(partitions))
            at_end: set[int] = set()
            while not self.stopping.is_set():
                for m in consumer.consume(num_messages=100, timeout=0.1):
                    error = m.error()
                    if error is None:
                        self.feed.add(got_from_message(m))
                    elif error.code() == KafkaError._PARTITION_EOF:
                        at_end.add(int(m.partition() or 0))  # the logical offset is resolved, fetched up to
                        if len(at_end) == partitions:
                            self.feed.ready.set()
                    else:
                        self.feed.fail(str(error))
        finally:
            consumer.close()


def _classic(assignor: str) -> dict[str, Any]:
    return {
        "partition.assignment.strategy": assignor,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
    }


# KIP-848: the broker assigns and sets the session and heartbeat interval; librdkafka refuses the
# classic protocol's assignment strategy, session timeout and heartbeat interval with it.
NEW_PROTOCOL = {"group.protocol": "consumer"}


class _Member(ThreadConsumer):
    def __init__(self, bootstrap: str, group: str, topic: str, name: str, protocol: dict[str, Any]) -> None:
        super().__init__(name)
        self.args = (bootstrap, group, topic, protocol)

    def run(self) -> None:
        from confluent_kafka import Consumer

        bootstrap, group, topic, protocol = self.args
        feed = self.feed
        consumer = Consumer(
            _conf(bootstrap, **{
                "group.id": group, "client.id": self.name, **protocol,
                "enable.auto.commit": False, "auto.offset.reset": "earliest",
            })
        )  # fmt: skip

        # With rebalance callbacks, librdkafka serves the rebalance inside consume(), on this thread:
        # a partition is never taken away between processing a record and committing it.
        # The new protocol's callbacks are incremental (only what is added or taken away): the feed is
        # given the member's whole assignment after each.
        incremental = "group.protocol" in protocol
        owned: set[int] = set()

        def on_assign(c: Any, tps: Any) -> None:
            owned.update(tp.partition for tp in tps)
            feed.group_assigned(owned if incremental else (tp.partition for tp in tps))

        def on_revoke(c: Any, tps: Any) -> None:
            owned.difference_update(tp.partition for tp in tps)
            feed.group_revoked(tp.partition for tp in tps)
            if incremental:
                feed.assigned(sorted(owned))

        try:
            consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
            while not self.stopping.is_set():
                msgs = consumer.consume(num_messages=100, timeout=0.1)
                for m in msgs:
                    if m.error() is None:
                        feed.add(got_from_message(m))
                    else:
                        feed.fail(str(m.error()))
                if any(m.error() is None for m in msgs):
                    consumer.commit(asynchronous=False)
        finally:
            consumer.close()  # commits nothing more (auto commit off) and leaves the group


class _ShareMember(ThreadConsumer):
    """librdkafka's KIP-932 ShareConsumer: poll, acknowledge (explicit mode) and commit_sync."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str, acks: ShareAcks | None) -> None:
        super().__init__(name)
        self.args = (bootstrap, group, topic)
        self.acks = acks

    def run(self) -> None:
        from confluent_kafka import AcknowledgeType, ShareConsumer

        bootstrap, group, topic = self.args
        mode = "implicit" if self.acks is None else "explicit"
        settings = {"group.id": group, "client.id": self.name, "share.acknowledgement.mode": mode}
        consumer = ShareConsumer(_conf(bootstrap, **settings))
        kinds = {"release": AcknowledgeType.RELEASE, "reject": AcknowledgeType.REJECT}
        awaited = set(self.acks or ())
        try:
            consumer.subscribe([topic])
            while not self.stopping.is_set():
                if self.acks is not None and self.acks and not awaited:
                    self.stopping.wait(0.1)  # done acknowledging: a member that holds nothing
                    continue
                msgs = [m for m in consumer.poll(0.1) if self._take(m)]
                if self.acks is None or not msgs:
                    continue
                for m in msgs:
                    where = (int(m.partition() or 0), int(m.offset() or 0))
                    kind = self.acks[where] if where in awaited else "accept"  # a redelivery: accepted
                    consumer.acknowledge(m, kinds.get(kind, AcknowledgeType.ACCEPT))
                    awaited.discard(where)
                for tp, error in consumer.commit_sync(TIMEOUT_S).items():
                    if error is not None:
                        self.feed.fail(f"acknowledging {tp}: {error}")
        finally:
            consumer.close()  # implicit mode: accepts the last poll's records; leaves the group

    def _take(self, m: Any) -> bool:
        if m.error() is not None:
            self.feed.fail(str(m.error()))
            return False
        self.feed.add(got_from_message(m))
        self.feed.delivered(int(m.partition() or 0), int(m.offset() or 0), int(m.delivery_count()))
        return True


class ConfluentDriver(Driver):
    name = "confluent-kafka"

    @property
    def version(self) -> str:
        import confluent_kafka

        return f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"

    def _admin(self, bootstrap: str) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient(_conf(bootstrap))

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        md = self._admin(bootstrap).list_topics(topic=topic, timeout=TIMEOUT_S)
        t = md.topics[topic]
        assert t.error is None, f"topic error {t.error}"
        brokers = sorted((b.id, b.host, b.port) for b in md.brokers.values())
        return TopicView(brokers, {p.id: p.leader for p in t.partitions.values()}, md.cluster_id)

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import NewTopic

        admin = self._admin(bootstrap)  # kept alive until its futures resolve
        futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
        futures[topic].result(TIMEOUT_S)

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        admin = self._admin(bootstrap)
        admin.delete_topics([topic])[topic].result(TIMEOUT_S)

    def list_topics(self, bootstrap: str) -> set[str]:
        return set(self._admin(bootstrap).list_topics(timeout=TIMEOUT_S).topics)

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        from confluent_kafka import Producer

        # A long linger keeps each partition in one batch until flush() sends it: librdkafka sends a batch
        # uncompressed when compressing does not make it smaller, which a lone small record can cause.
        producer = Producer(_conf(bootstrap, **{"compression.type": codec, "linger.ms": 1000, "acks": "all"}))
        producer.list_topics(topic, timeout=TIMEOUT_S)  # metadata first: nothing is queued unrouted
        send_confluent(producer, topic, recs, TIMEOUT_S)

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        return _Reader(bootstrap, topic, partitions, start)

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return _Member(bootstrap, group, topic, name, _classic(assignor))

    def new_protocol_member(self, bootstrap: str, group: str, topic: str, name: str) -> Consumer:
        return _Member(bootstrap, group, topic, name, NEW_PROTOCOL)

    def group_type(self, bootstrap: str, group: str) -> str:
        from confluent_kafka import ConsumerGroupType

        admin = self._admin(bootstrap)
        described = admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)
        by_type = {
            t: {g.group_id for g in admin.list_consumer_groups(types={t}).result(TIMEOUT_S).valid}
            for t in (ConsumerGroupType.CONSUMER, ConsumerGroupType.CLASSIC)
        }
        described_as = str(described.type.name.lower())
        listed_as = [t.name.lower() for t, ids in by_type.items() if group in ids]
        assert listed_as == [described_as], f"listed as {listed_as}, described as {described_as}"
        return described_as

    def set_group_config(self, bootstrap: str, group: str, name: str, value: str) -> None:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
        admin = self._admin(bootstrap)
        for future in admin.incremental_alter_configs([resource]).values():
            future.result(TIMEOUT_S)

    def share_member(
        self, bootstrap: str, group: str, topic: str, name: str, acks: ShareAcks | None = None
    ) -> Consumer:
        return _ShareMember(bootstrap, group, topic, name, acks)

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition

        consumer = Consumer(_conf(bootstrap, **{"group.id": group, "enable.auto.commit": False}))
        try:
            consumer.commit(
                offsets=[TopicPartition(topic, p, o, metadata=f"meta-{p}") for p, o in offsets.items()],
                asynchronous=False,
            )
            got = consumer.committed([TopicPartition(topic, p) for p in offsets], timeout=TIMEOUT_S)
        finally:
            consumer.close()
        out = {}
        for tp in got:
            assert tp.error is None and tp.metadata == f"meta-{tp.partition}", (
                f"{tp}: {tp.error} {tp.metadata!r}"
            )
            out[tp.partition] = tp.offset
        admin = self._admin(bootstrap)
        listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        by_admin = {
            tp.partition: tp.offset
            for tp in listed[group].result(TIMEOUT_S).topic_partitions
            if tp.topic == topic
        }
        assert by_admin == out, f"admin saw {by_admin}, consumer {out}"
        return out

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        admin = self._admin(bootstrap)
        listing = admin.list_consumer_groups().result(TIMEOUT_S)
        assert not listing.errors, f"list errors {listing.errors}"
        listed = any(g.group_id == group for g in listing.valid)
        d = admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)
        members = []
        for m in d.members:
            parts: dict[str, list[int]] = {}
            for tp in m.assignment.topic_partitions:
                parts.setdefault(tp.topic, []).append(tp.partition)
            members.append((m.client_id, {t: sorted(ps) for t, ps in parts.items()}))
        protocol_type = "" if d.is_simple_consumer_group else "consumer"
        return GroupView(listed, protocol_type, d.state.name, d.partition_assignor, members)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        from confluent_kafka import Consumer, Producer, TopicPartition

        producer = Producer(_conf(bootstrap, **{"transactional.id": transactional_id, "linger.ms": 5}))
        producer.init_transactions(TIMEOUT_S)
        for step in steps:
            producer.begin_transaction()
            send_confluent(producer, topic, step.records, TIMEOUT_S)
            if step.group is not None and step.offsets:
                # The group's metadata, from a consumer of the group that has not joined it.
                consumer = Consumer(_conf(bootstrap, **{"group.id": step.group, "enable.auto.commit": False}))
                try:
                    offsets = [TopicPartition(topic, p, o) for p, o in step.offsets.items()]
                    producer.send_offsets_to_transaction(
                        offsets, consumer.consumer_group_metadata(), TIMEOUT_S
                    )
                finally:
                    consumer.close()
            if step.commit:
                producer.commit_transaction(TIMEOUT_S)
            else:
                producer.abort_transaction(TIMEOUT_S)

    def old_protocol(self, bootstrap: str, topic: str, recs: Sequence[Rec]) -> list[Got]:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

        # No ApiVersions request: librdkafka uses a 0.9 broker's versions (Produce v1, Fetch v1, format v0);
        # a fallback of 0.10 or above would send ApiVersions anyway.
        old = {"api.version.request": False, "broker.version.fallback": "0.9.0"}
        producer = Producer(_conf(bootstrap, **old, **{"linger.ms": 20}))
        for r in recs:
            producer.produce(topic, key=r.key, value=r.value, partition=r.partition)
        assert producer.flush(TIMEOUT_S) == 0, "records left unsent"
        consumer = Consumer(
            _conf(bootstrap, **old, **{"group.id": f"old-{topic}", "enable.auto.commit": False})
        )
        got: list[Got] = []
        try:
            partitions = sorted({r.partition for r in recs})
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
            for _ in range(120):  # a bound for a hung client, never a performance threshold
                if len(got) >= len(recs):
                    break
                for m in consumer.consume(num_messages=100, timeout=0.5):
                    assert m.error() is None, str(m.error())
                    got.append(got_from_message(m))
        finally:
            consumer.close()
        return got
