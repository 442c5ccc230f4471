"""aiokafka: asyncio clients; each consumer runs on its own event loop in a thread of the test process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from tests.compat.clients.base import (
    HEARTBEAT_INTERVAL_MS,
    SESSION_TIMEOUT_MS,
    Consumer,
    Driver,
    GroupView,
    ThreadConsumer,
    TopicView,
    TxnStep,
)
from tests.compat.records import Rec
from tests.support.produce import send_aiokafka
from tests.support.records import got_from_record

T = TypeVar("T")
COMMON: dict[str, Any] = {"retry_backoff_ms": 100, "request_timeout_ms": 30_000}
TXN_CALL_S = 60.0  # a bound on each transaction's calls: a broker that never answers fails the cell


def _assignor(name: str) -> Any:
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    return {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[name]


class _AsyncConsumer(ThreadConsumer):
    """Runs `consume()` with asyncio.run in the thread; `stopping` is polled between batches."""

    def run(self) -> None:
        asyncio.run(self.consume())

    async def consume(self) -> None:
        raise NotImplementedError


class _Reader(_AsyncConsumer):
    def __init__(self, bootstrap: str, topic: str, partitions: int, start: str) -> None:
        super().__init__(f"aiokafka-reader-{topic}")
        self.args = (bootstrap, topic, partitions, start)

    async def consume(self) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        bootstrap, topic, partitions, start = self.args
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **COMMON)
        await consumer.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(tps)
            if start == "earliest":
                await consumer.seek_to_beginning(*tps)
            else:
                await consumer.seek_to_end(*tps)
            for tp in tps:
                await consumer.position(tp)
            self.feed.assigned(range(partitions))
            self.feed.ready.set()
            while not self.stopping.is_set():
                for msgs in (await consumer.getmany(timeout_ms=100)).values():
                    for m in msgs:
                        self.feed.add(got_from_record(m))
        finally:
            await consumer.stop()


class _Member(_AsyncConsumer):
    def __init__(self, bootstrap: str, group: str, topic: str, name: str, assignor: str) -> None:
        super().__init__(name)
        self.args = (bootstrap, group, topic, assignor)

    async def consume(self) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

        bootstrap, group, topic, assignor = self.args
        feed = self.feed
        processing = asyncio.Lock()

        # aiokafka rebalances in a background task; the documented way to keep manual commits exact
        # is a listener that waits for the batch in hand to be processed and committed.
        class Listener(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked: Any) -> None:
                async with processing:
                    feed.group_revoked(tp.partition for tp in revoked)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                feed.group_assigned(tp.partition for tp in assigned)

        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, client_id=self.name,
            partition_assignment_strategy=(_assignor(assignor),),
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            enable_auto_commit=False, auto_offset_reset="earliest", **COMMON,
        )  # fmt: skip
        await consumer.start()
        try:
            consumer.subscribe([topic], listener=Listener())
            while not self.stopping.is_set():
                batch = await consumer.getmany(timeout_ms=100)
                async with processing:
                    for msgs in batch.values():
                        for m in msgs:
                            feed.add(got_from_record(m))
                    if batch:
                        await consumer.commit()  # synchronous: the records above are processed
        finally:
            await consumer.stop()  # leaves the group


def _run(fn: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        return await fn()

    return asyncio.run(main())


class AIOKafkaDriver(Driver):
    name = "aiokafka"
    not_applicable = {
        "consumer-protocol": "not supported by the client: aiokafka 0.14 has only the classic group "
        "protocol (JoinGroup/SyncGroup, client-side assignors)",
        "old-protocol": "not supported by the client: aiokafka 0.14 always negotiates versions with "
        "ApiVersions (its api_version parameter is a no-op since 0.13)",
        "share-group": "not supported by the client: aiokafka 0.14 has no share consumer (KIP-932)",
    }

    @property
    def version(self) -> str:
        import aiokafka

        return str(aiokafka.__version__)

    async def _with_admin(self, bootstrap: str, fn: Callable[[Any], Awaitable[T]]) -> T:
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, retry_backoff_ms=100)
        await admin.start()
        try:
            return await fn(admin)
        finally:
            await admin.close()

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        from aiokafka import AIOKafkaProducer

        async def run() -> TopicView:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **COMMON)
            await producer.start()
            try:
                partitions = await producer.partitions_for(topic)
                cluster = producer.client.cluster
                brokers = sorted((b.nodeId, b.host, b.port) for b in cluster.brokers())
                leaders = {p: cluster.leader_for_partition(_tp(topic, p)) for p in partitions}
            finally:
                await producer.stop()
            described = await self._with_admin(bootstrap, lambda a: a.describe_cluster())
            return TopicView(brokers, leaders, described.get("cluster_id"))

        return _run(run)

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        from aiokafka.admin import NewTopic

        async def create(admin: Any) -> None:
            response = await admin.create_topics([NewTopic(topic, partitions, 1)])
            errors = [t[1] for t in response.topic_errors if t[1] != 0]
            assert not errors, f"CreateTopics errors {response.topic_errors}"

        _run(lambda: self._with_admin(bootstrap, create))

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        async def delete(admin: Any) -> None:
            response = await admin.delete_topics([topic])
            errors = [t for t in response.topic_error_codes if t[1] != 0]
            assert not errors, f"DeleteTopics errors {errors}"

        _run(lambda: self._with_admin(bootstrap, delete))

    def list_topics(self, bootstrap: str) -> set[str]:
        async def listing(admin: Any) -> set[str]:
            return set(await admin.list_topics())

        return _run(lambda: self._with_admin(bootstrap, listing))

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        from aiokafka import AIOKafkaProducer

        async def run() -> None:
            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                compression_type=None if codec == "none" else codec, **COMMON,
            )  # fmt: skip
            await producer.start()
            try:
                await send_aiokafka(producer, topic, recs)
            finally:
                await producer.stop()

        _run(run)

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        return _Reader(bootstrap, topic, partitions, start)

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return _Member(bootstrap, group, topic, name, assignor)

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.structs import OffsetAndMetadata

        async def run() -> dict[int, int]:
            consumer = AIOKafkaConsumer(
                bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **COMMON
            )
            await consumer.start()
            try:
                tps = {p: _tp(topic, p) for p in offsets}
                consumer.assign(list(tps.values()))
                await consumer.commit({tps[p]: OffsetAndMetadata(o, f"meta-{p}") for p, o in offsets.items()})
                out = {p: await consumer.committed(tp) for p, tp in tps.items()}
            finally:
                await consumer.stop()
            listed = await self._with_admin(bootstrap, lambda a: a.list_consumer_group_offsets(group))
            by_admin = {tp.partition: om.offset for tp, om in listed.items() if tp.topic == topic}
            metadata = {tp.partition: om.metadata for tp, om in listed.items() if tp.topic == topic}
            assert by_admin == out, f"admin saw {by_admin}, consumer {out}"
            assert metadata == {p: f"meta-{p}" for p in offsets}, f"metadata {metadata}"
            return out

        return _run(run)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        from aiokafka import AIOKafkaProducer

        async def one(producer: Any, step: TxnStep) -> None:
            await producer.begin_transaction()
            await send_aiokafka(producer, topic, step.records)
            if step.group is not None and step.offsets:
                offsets = {_tp(topic, p): o for p, o in step.offsets.items()}
                await producer.send_offsets_to_transaction(offsets, step.group)
            if step.commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()

        async def run() -> None:
            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=5, **COMMON
            )
            await asyncio.wait_for(producer.start(), TXN_CALL_S)
            try:
                for step in steps:
                    await asyncio.wait_for(one(producer, step), TXN_CALL_S)
            finally:
                await producer.stop()

        _run(run)

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

        async def run(admin: Any) -> GroupView:
            listed = await admin.list_consumer_groups()
            (response,) = await admin.describe_consumer_groups([group])
            return _view(group, listed, response, ConsumerProtocolMemberAssignment)

        return _run(lambda: self._with_admin(bootstrap, run))


def _tp(topic: str, partition: int) -> Any:
    from aiokafka import TopicPartition

    return TopicPartition(topic, partition)


def _view(group: str, listed: Any, response: Any, assignment_cls: Any) -> GroupView:
    (g,) = response.groups
    error, group_id, state, protocol_type, protocol, raw_members = g[:6]
    assert error == 0 and group_id == group, f"DescribeGroups: error {error} for {group_id}"
    members = []
    for m in raw_members:
        client_id, raw_assignment = m[1], m[-1]
        assignment = assignment_cls.decode(raw_assignment)
        members.append((client_id, {t: sorted(ps) for t, ps in assignment.assignment}))
    names = {entry[0] for entry in listed}
    return GroupView(group in names, protocol_type, state, protocol, members)
