"""Injected faults as a user meets them through the `kafkito` fixture, with real clients: errors a
producer retries through, partitions answered with an error while the others are served, commits
that store nothing, delayed fetches, dropped and black-holed clients."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka import KafkaError as KafkaErr
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from kafkito.testing import KafkitoHandle
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until


def _read_all(kafkito: KafkitoHandle, topic: str, partitions: int, expected: int) -> list[tuple[int, bytes]]:
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, auto_offset_reset="earliest")
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    got: list[tuple[int, bytes]] = []
    try:
        wait_until(
            lambda: (
                got.extend((m.partition, m.value) for batch in consumer.poll(200).values() for m in batch)
                or len(got) >= expected
            ),
            what=f"{expected} records from {topic}",
        )
        got.extend((m.partition, m.value) for batch in consumer.poll(200).values() for m in batch)
    finally:
        consumer.close()
    return got


def test_a_kafka_python_producer_retries_through_three_not_leader_errors_and_loses_nothing(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("orders", partitions=2)
    fault = kafkito.inject("Produce", "NOT_LEADER_OR_FOLLOWER", count=3, topic="orders", partition=0)
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers, retries=10, retry_backoff_ms=20)
    futures = [producer.send("orders", b"order-%d" % i, partition=i % 2) for i in range(20)]
    producer.flush(DEADLINE_S)
    acks = [f.get(DEADLINE_S) for f in futures]
    producer.close()

    assert fault.fired == 3 and fault.remaining == 0 and not fault.active
    assert kafkito.faults() == []
    assert sorted(a.offset for a in acks if a.partition == 0) == list(range(10))
    got = _read_all(kafkito, "orders", 2, 20)
    assert sorted(got) == sorted((i % 2, b"order-%d" % i) for i in range(20))  # each once, none lost


def test_a_confluent_producer_retries_through_three_not_leader_errors_and_loses_nothing(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("payments")
    fault = kafkito.inject("Produce", "NOT_LEADER_OR_FOLLOWER", count=3, topic="payments")
    producer = Producer({"bootstrap.servers": kafkito.bootstrap_servers, "linger.ms": 0})
    errors: list[object] = []
    for i in range(30):
        producer.produce("payments", b"pay-%d" % i, on_delivery=lambda err, _m: err and errors.append(err))
    assert producer.flush(DEADLINE_S) == 0
    assert errors == []
    assert fault.fired == 3

    got = _read_all(kafkito, "payments", 1, 30)
    assert [v for _, v in got] == [b"pay-%d" % i for i in range(30)]  # in order, each once


def test_only_the_matching_partition_is_answered_with_the_error_and_it_appends_nothing(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("split", partitions=2)
    kafkito.inject("Produce", "INVALID_REQUIRED_ACKS", count=None, topic="split", partition=1)
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers, linger_ms=50)
    to_0 = producer.send("split", b"zero", partition=0)
    to_1 = producer.send("split", b"one", partition=1)
    producer.flush(DEADLINE_S)

    assert to_0.get(DEADLINE_S).offset == 0
    with pytest.raises(KafkaError) as raised:
        to_1.get(DEADLINE_S)
    assert "InvalidRequiredAcks" in type(raised.value).__name__
    producer.close()
    kafkito.clear_faults()
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers)
    ends = consumer.end_offsets([TopicPartition("split", 0), TopicPartition("split", 1)])
    consumer.close()
    assert ends == {TopicPartition("split", 0): 1, TopicPartition("split", 1): 0}


def test_a_faulted_commit_stores_nothing_and_the_other_partitions_commit(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("ledger", partitions=2)
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="auditors")
    p0, p1 = TopicPartition("ledger", 0), TopicPartition("ledger", 1)
    fault = kafkito.inject("OffsetCommit", "GROUP_AUTHORIZATION_FAILED", group="auditors")
    with pytest.raises(KafkaError):
        consumer.commit({p0: OffsetAndMetadata(5, "", -1)})
    assert fault.fired == 1
    assert consumer.committed(p0) is None

    kafkito.inject("OffsetCommit", "TOPIC_AUTHORIZATION_FAILED", topic="ledger", partition=1)
    with pytest.raises(KafkaError):
        consumer.commit({p0: OffsetAndMetadata(7, "", -1), p1: OffsetAndMetadata(9, "", -1)})
    assert consumer.committed(p0) == 7
    assert consumer.committed(p1) is None
    consumer.close()


def test_a_delayed_fetch_holds_the_records_until_the_client_reconnects(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("slow")
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers)
    producer.send("slow", b"late").get(DEADLINE_S)
    producer.close()
    fault = kafkito.inject("Fetch", None, topic="slow", delay_ms=600_000, client_id="reader")
    consumer = KafkaConsumer(
        bootstrap_servers=kafkito.bootstrap_servers, client_id="reader", auto_offset_reset="earliest"
    )
    consumer.assign([TopicPartition("slow", 0)])
    wait_until(lambda: consumer.poll(100) == {} and fault.fired, what="the reader's fetch to be held")
    # The held fetch blocks the connection: nothing arrives while it is held (polling a while, on purpose).
    assert all(consumer.poll(100) == {} for _ in range(5))

    assert kafkito.disconnect("reader") >= 1  # the client reconnects and fetches again, undelayed
    got: list[bytes] = []
    wait_until(
        lambda: got.extend(m.value for b in consumer.poll(200).values() for m in b) or got,
        what="the record after the reconnect",
    )
    consumer.close()
    assert got == [b"late"] and fault.fired == 1


def test_a_blackholed_client_times_out_and_is_answered_again_once_released(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("dark")
    consumer = Consumer(
        {
            "bootstrap.servers": kafkito.bootstrap_servers,
            "client.id": "lost",
            "group.id": "lost-group",
            "auto.offset.reset": "earliest",
            "socket.timeout.ms": 1000,
        }
    )
    metadata = consumer.list_topics("dark", timeout=DEADLINE_S)
    assert "dark" in metadata.topics
    kafkito.blackhole("lost")
    with pytest.raises(KafkaException) as raised:  # its requests time out: it gives up on the broker
        consumer.list_topics("dark", timeout=3)
    assert raised.value.args[0].code() in (KafkaErr._TRANSPORT, KafkaErr._TIMED_OUT)
    kafkito.unblackhole("lost")
    assert "dark" in consumer.list_topics("dark", timeout=DEADLINE_S).topics
    consumer.close()


def test_request_level_errors_answer_group_apis(kafkito: KafkitoHandle) -> None:
    fault = kafkito.inject("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=2, group="retrying")
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="retrying")
    p0 = TopicPartition("anything", 0)
    assert consumer.committed(p0) is None  # the client retried FindCoordinator past the two errors
    consumer.close()
    assert fault.fired == 2


def test_a_rule_that_could_never_apply_is_refused(kafkito: KafkitoHandle) -> None:
    with pytest.raises(ValueError, match="unknown API"):
        kafkito.inject("Produse", "NOT_LEADER_OR_FOLLOWER")
    with pytest.raises(ValueError, match="unknown error"):
        kafkito.inject("Produce", "NOT_A_LEADER")
    with pytest.raises(ValueError, match="no partitions"):
        kafkito.inject("Heartbeat", "REBALANCE_IN_PROGRESS", topic="t")
    with pytest.raises(ValueError, match="names no group"):
        kafkito.inject("Produce", "NOT_LEADER_OR_FOLLOWER", group="g")
    with pytest.raises(ValueError, match="an error, a delay"):
        kafkito.inject("Fetch", None)
    rule = kafkito.inject(1, 6, count=None)  # numbers work too
    assert rule.as_dict()["api"] == "Fetch" and rule.as_dict()["error"] == "NOT_LEADER_OR_FOLLOWER"
    rule.remove()
    assert kafkito.faults() == []


def test_a_fetch_error_on_one_partition_leaves_the_other_flowing_and_the_client_recovers(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("feed", partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers)
    for i in range(10):
        producer.send("feed", b"item-%d" % i, partition=i % 2)
    producer.flush(DEADLINE_S)
    producer.close()
    fault = kafkito.inject("Fetch", "NOT_LEADER_OR_FOLLOWER", count=3, topic="feed", partition=1)

    got = _read_all(kafkito, "feed", 2, 10)

    assert sorted(got) == sorted((i % 2, b"item-%d" % i) for i in range(10))
    assert fault.fired == 3


def test_metadata_reports_the_error_on_the_matching_topic_only(kafkito: KafkitoHandle) -> None:
    from confluent_kafka.admin import AdminClient

    kafkito.create_topic("hidden")
    kafkito.create_topic("visible")
    fault = kafkito.inject("Metadata", "LEADER_NOT_AVAILABLE", count=None, topic="hidden")
    admin = AdminClient({"bootstrap.servers": kafkito.bootstrap_servers})
    topics = admin.list_topics(timeout=DEADLINE_S).topics
    assert topics["hidden"].error is not None
    assert topics["hidden"].error.code() == KafkaErr.LEADER_NOT_AVAILABLE
    assert topics["visible"].error is None and len(topics["visible"].partitions) == 1

    fault.remove()
    assert admin.list_topics("hidden", timeout=DEADLINE_S).topics["hidden"].error is None
    assert fault.fired >= 1 and not fault.active


def test_group_requests_answered_with_errors_make_the_member_retry_and_rejoin(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("tasks")
    join = kafkito.inject("JoinGroup", "COORDINATOR_LOAD_IN_PROGRESS", count=2, group="crew")
    sync = kafkito.inject("SyncGroup", "REBALANCE_IN_PROGRESS", group="crew")
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="crew")
    subscribe(consumer, ["tasks"])
    try:
        wait_until(lambda: consumer.poll(100) == {} and consumer.assignment(), what="the assignment")
        assert (join.fired, sync.fired) == (2, 1)
        first = kafkito.wait_for_group("crew", members=1)

        heartbeat = kafkito.inject("Heartbeat", "REBALANCE_IN_PROGRESS", group="crew")

        def rejoined() -> bool:
            consumer.poll(100)
            group = kafkito.describe_group("crew")
            return (
                group is not None and group["state"] == "Stable" and group["generation"] > first["generation"]
            )

        wait_until(rejoined, what="the member to rejoin after the heartbeat error")
        assert heartbeat.fired == 1
    finally:
        consumer.close()


def test_admin_requests_answered_with_errors_raise_them(kafkito: KafkitoHandle) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewPartitions, NewTopic
    from kafka.errors import InvalidPartitionsError, PolicyViolationError

    admin = KafkaAdminClient(bootstrap_servers=kafkito.bootstrap_servers)
    kafkito.inject("CreateTopics", "POLICY_VIOLATION")
    with pytest.raises(PolicyViolationError):
        admin.create_topics([NewTopic("refused", 1, 1)])
    admin.create_topics([NewTopic("refused", 1, 1)])  # the rule is used up: created now
    kafkito.inject("CreatePartitions", "INVALID_PARTITIONS")
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"refused": NewPartitions(3)})
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers)
    assert consumer.partitions_for_topic("refused") == {0}  # nothing of the faulted request was done
    consumer.close()


def test_a_confluent_consumer_recovers_from_fetch_errors_on_one_partition(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("stream", partitions=2)
    producer = Producer({"bootstrap.servers": kafkito.bootstrap_servers})
    for i in range(10):
        producer.produce("stream", b"s-%d" % i, partition=i % 2)
    assert producer.flush(DEADLINE_S) == 0
    # librdkafka names the topic by its id in Fetch v13+: the rule still finds the partition.
    fault = kafkito.inject("Fetch", "NOT_LEADER_OR_FOLLOWER", count=2, topic="stream", partition=0)
    consumer = Consumer(
        {
            "bootstrap.servers": kafkito.bootstrap_servers,
            "group.id": "streamers",
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    consumer.subscribe(["stream"])
    got: list[tuple[int, bytes]] = []

    def read() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.partition(), msg.value()))
        return len(got) == 10

    try:
        wait_until(read, what="every record of both partitions")
    finally:
        consumer.close()
    assert sorted(got) == sorted((i % 2, b"s-%d" % i) for i in range(10))
    assert fault.fired == 2
