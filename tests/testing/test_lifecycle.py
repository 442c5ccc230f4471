"""The handle's life cycle and group views as a user meets them: `start()` outside pytest, restarts that
keep what was acknowledged (also when killed), `wait_for_group` on a rebalance, `nodes`."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafkito.testing import KafkitoHandle, start
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until


def _values(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    consumer.assign([TopicPartition(topic, 0)])
    got: list[bytes] = []
    try:
        wait_until(
            lambda: (
                got.extend(m.value for b in consumer.poll(200).values() for m in b) or len(got) >= expected
            ),
            what=f"{expected} records",
        )
    finally:
        consumer.close()
    return got


def test_start_outside_pytest_runs_a_broker_and_stop_removes_its_data() -> None:
    with start(num_partitions=3) as kafka:
        assert kafka.bootstrap_servers == f"127.0.0.1:{kafka.port}"
        assert [n.bootstrap_servers for n in kafka.nodes] == [kafka.bootstrap_servers]
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
        producer.send("auto-created", b"v").get(DEADLINE_S)  # num.partitions=3 from the properties
        assert producer.partitions_for("auto-created") == {0, 1, 2}
        producer.close()
        data_dir = kafka.data_dir
        assert data_dir.exists()
    assert not kafka.running
    assert not data_dir.exists()


def test_restart_keeps_the_data_dir_and_the_port(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("kept")
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers)
    producer.send("kept", b"before").get(DEADLINE_S)
    producer.close()
    port = kafkito.port

    kafkito.restart()

    assert kafkito.port == port
    assert _values(kafkito.bootstrap_servers, "kept", 1) == [b"before"]


def test_restart_kill_keeps_every_acknowledged_record(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("acked")
    producer = Producer({"bootstrap.servers": kafkito.bootstrap_servers, "acks": "all", "linger.ms": 5})
    acked: list[bytes] = []
    for i in range(200):
        producer.produce(
            "acked", b"rec-%d" % i, on_delivery=lambda e, m: e is None and acked.append(m.value())
        )
    assert producer.flush(DEADLINE_S) == 0

    kafkito.restart(kill=True)  # no clean shutdown: the logs are recovered as after a SIGKILL

    producer.produce("acked", b"after", on_delivery=lambda e, m: e is None and acked.append(m.value()))
    assert producer.flush(DEADLINE_S) == 0  # the same producer goes on against the restarted broker
    assert _values(kafkito.bootstrap_servers, "acked", 201) == acked
    producer.flush(DEADLINE_S)


def _member(bootstrap: str) -> KafkaConsumer:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="readers")
    subscribe(consumer, ["events"])
    return consumer


def test_wait_for_group_returns_the_group_once_it_is_stable_with_its_members(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("events", partitions=4)
    first = _member(kafkito.bootstrap_servers)
    try:
        wait_until(lambda: first.poll(100) == {} and first.assignment(), what="the first assignment")
        one = kafkito.wait_for_group("readers", "Stable", members=1)
        assert one["protocol_type"] == "consumer" and one["protocol"] in ("range", "roundrobin", "sticky")

        second = _member(kafkito.bootstrap_servers)
        try:
            wait_until(
                lambda: first.poll(100) == {} and second.poll(100) == {} and len(second.assignment()) == 2,
                what="the rebalance to two members",
            )
            two = kafkito.wait_for_group("readers", members=2)
            assert two["generation"] > one["generation"]
            assert {m["member_id"] for m in two["members"]} > {m["member_id"] for m in one["members"]}

            with pytest.raises(TimeoutError, match="last seen Stable with 2 members"):
                kafkito.wait_for_group("readers", members=3, timeout=0.5)
        finally:
            second.close()
    finally:
        first.close()
    events = [e["event"] for e in kafkito.group_timeline("readers")]
    assert events.count("rebalance_started") >= 2 and "member_joined" in events


def test_wait_for_a_group_that_does_not_exist_says_so(kafkito: KafkitoHandle) -> None:
    assert kafkito.describe_group("nobody") is None
    with pytest.raises(TimeoutError, match="does not exist"):
        kafkito.wait_for_group("nobody", timeout=0.2)


def test_start_takes_a_data_dir_it_leaves_in_place(tmp_path: Path) -> None:
    kafka = start({"log.segment.bytes": 1_048_576}, data_dir=tmp_path / "mine")
    kafka.stop()
    assert (tmp_path / "mine" / "meta.properties").exists()
    with pytest.raises(ValueError, match="at least 1"):
        start(nodes=0)


async def test_an_asyncio_test_waits_for_its_aiokafka_group_without_blocking_it(
    kafkito: KafkitoHandle,
) -> None:
    from aiokafka import AIOKafkaConsumer

    kafkito.create_topic("async-events", partitions=2)
    consumer = AIOKafkaConsumer("async-events", bootstrap_servers=kafkito.bootstrap_servers, group_id="aio")
    await consumer.start()
    try:
        # The consumer joins on this very loop while the test waits for its group.
        group = await kafkito.wait_for_group_async("aio", "Stable", members=1)
        assert group["members"][0]["client_id"].startswith("aiokafka")
        with pytest.raises(TimeoutError, match="last seen Stable with 1 members"):
            await kafkito.wait_for_group_async("aio", members=2, timeout=0.3)
    finally:
        await consumer.stop()
