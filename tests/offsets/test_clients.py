"""Real clients against a broker process that restarts: consumers resume, admin clients agree."""

from __future__ import annotations

import time
from typing import Any

from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % partitions)
    assert producer.flush(30) == 0


def test_a_group_resumes_exactly_after_its_commits_across_a_restart(broker_process: Any) -> None:
    from confluent_kafka import Consumer
    from kafka import KafkaConsumer

    broker: ProcessBroker = broker_process(group_initial_rebalance_delay_ms=0)
    create_topic(broker.bootstrap, "resume", 3)
    produce(broker.bootstrap, "resume", 90, 3)

    first = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        group_id="resumers",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=7,
    )
    subscribe(first, ["resume"])
    seen: set[tuple[int, int]] = set()
    while len(seen) < 40:
        for records in first.poll(timeout_ms=200).values():
            seen.update((r.partition, r.offset) for r in records)
    first.commit()
    committed = {tp.partition: first.committed(tp) for tp in first.assignment()}
    first.close()
    assert sum(committed.values()) == len(seen)

    broker.kill()  # no clean shutdown: the commit must already be on disk
    broker.start()

    second = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "resumers",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    second.subscribe(["resume"])
    rest: list[tuple[int, int]] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(rest) < 90 - len(seen):
        assert time.monotonic() < deadline, f"resumed only {len(rest)} records"
        msg = second.poll(0.2)
        if msg is not None and msg.error() is None:
            rest.append((msg.partition(), msg.offset()))
    second.close()
    # Exactly the records after the committed positions: nothing skipped, nothing read twice.
    assert sorted(rest) == sorted((p, o) for p in range(3) for o in range(committed[p], 30))


def test_admin_clients_agree_on_committed_offsets_before_and_after_a_restart(broker_process: Any) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTopicPartition
    from kafka.structs import OffsetAndMetadata

    broker: ProcessBroker = broker_process()
    create_topic(broker.bootstrap, "adm", 3)

    def confluent_view() -> dict[tuple[str, int], int]:
        # Offsets only: librdkafka treats commit metadata as a C string (it commits the trailing NUL
        # and reads up to one), so metadata another client wrote does not read back through it.
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("admins")])
        listed = result["admins"].result(30)
        return {(tp.topic, tp.partition): tp.offset for tp in listed.topic_partitions}

    def offsets_of(view: dict[tuple[str, int], tuple[int, str]]) -> dict[tuple[str, int], int]:
        return {tp: offset for tp, (offset, _) in view.items()}

    def kafka_python_view() -> dict[tuple[str, int], tuple[int, str]]:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            # Two groups in one OffsetFetch v8; the other one has never committed.
            listed = admin.list_group_offsets(["admins", "nobody"])
        finally:
            admin.close()
        assert listed["nobody"] == {}
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in listed["admins"].items()}

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    altered = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("admins", [TopicPartition("adm", 0, 5), TopicPartition("adm", 2, 17)])]
    )
    assert [tp.error for tp in altered["admins"].result(30).topic_partitions] == [None, None]
    expected = {("adm", 0): (5, ""), ("adm", 2): (17, "")}
    assert kafka_python_view() == expected
    assert confluent_view() == offsets_of(expected)

    broker.kill()
    broker.start()
    assert wait_until(lambda: confluent_view() == offsets_of(expected), what="offsets back after the restart")
    assert kafka_python_view() == expected

    kp_admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        errors = kp_admin.alter_group_offsets(
            "admins", {KTopicPartition("adm", 1): OffsetAndMetadata(3, "one", -1)}
        )
    finally:
        kp_admin.close()
    assert [e.__name__ for e in errors.values()] == ["NoError"]
    broker.restart()  # a graceful one this time
    expected[("adm", 1)] = (3, "one")
    assert wait_until(lambda: kafka_python_view() == expected, what="offsets back after the graceful restart")
    assert confluent_view() == offsets_of(expected)
