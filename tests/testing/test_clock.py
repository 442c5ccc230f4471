"""Moving the broker's clock with `kafkito.advance(ms)`, as a user would: a crashed group member is
evicted at once instead of after its 45 s session, a transaction times out, offsets expire."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaException, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafkito.testing import KafkitoHandle
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until

# A confluent-kafka group member in a process of its own, with Kafka's default 45 s session.
MEMBER = """
import sys
from confluent_kafka import Consumer
config = {"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "client.id": "doomed"}
if len(sys.argv) > 4:
    config["group.protocol"] = sys.argv[4]
c = Consumer(config)
c.subscribe([sys.argv[3]], on_assign=lambda c, ps: print("assigned", len(ps), flush=True))
while True:
    c.poll(0.2)
"""


@pytest.fixture
def doomed_member(kafkito: KafkitoHandle) -> Iterator[subprocess.Popen[str]]:
    kafkito.create_topic("jobs", partitions=2)
    proc = subprocess.Popen(
        [sys.executable, "-c", MEMBER, kafkito.bootstrap_servers, "workers", "jobs"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    yield proc
    proc.kill()
    proc.wait()


class Survivor:
    """A kafka-python member polling in a thread, with a session longer than the one advanced over."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id="workers",
            client_id="survivor",
            session_timeout_ms=120_000,
            request_timeout_ms=130_000,
            heartbeat_interval_ms=500,
        )
        subscribe(self.consumer, ["jobs"])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.consumer.poll(100)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(DEADLINE_S)
        self.consumer.close()


def test_a_member_killed_without_leaving_is_evicted_right_after_advancing_its_session_timeout(
    kafkito: KafkitoHandle, doomed_member: subprocess.Popen[str]
) -> None:
    assert doomed_member.stdout is not None
    assert doomed_member.stdout.readline().startswith("assigned 2")
    survivor = Survivor(kafkito.bootstrap_servers)
    try:
        group = kafkito.wait_for_group("workers", "Stable", members=2)
        doomed = next(m["member_id"] for m in group["members"] if m["client_id"] == "doomed")

        doomed_member.kill()  # SIGKILL: no LeaveGroup, the broker only notices by its session timeout
        doomed_member.wait()
        assert doomed in [m["member_id"] for m in kafkito.describe_group("workers")["members"]]

        kafkito.advance(45_000)  # confluent-kafka's default session.timeout.ms
        after = kafkito.describe_group("workers")
        assert doomed not in [m["member_id"] for m in after["members"]]
        assert after["state"] != "Stable"  # the group rebalances at once, without the dead member

        stable = kafkito.wait_for_group("workers", "Stable", members=1)
        assert stable["generation"] > group["generation"]
        wait_until(
            lambda: len(survivor.consumer.assignment()) == 2, what="the survivor to own both partitions"
        )
    finally:
        survivor.close()
    evicted = [e["member"] for e in kafkito.group_timeline("workers") if e["event"] == "member_evicted"]
    assert evicted == [doomed]


def test_advance_returns_the_broker_time_and_never_goes_back(kafkito: KafkitoHandle) -> None:
    before = kafkito.now_ms()
    after = kafkito.advance(3_600_000)
    assert after >= before + 3_600_000
    assert kafkito.now_ms() >= after
    with pytest.raises(ValueError):
        kafkito.advance(-1)


@pytest.mark.kafkito(transaction_abort_timed_out_transaction_cleanup_interval_ms=10_000)
def test_an_open_transaction_times_out_when_the_clock_is_advanced(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("txns")
    producer = Producer(
        {
            "bootstrap.servers": kafkito.bootstrap_servers,
            "transactional.id": "slowpoke",
            "transaction.timeout.ms": 60_000,
        }
    )
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce("txns", b"never committed")
    assert producer.flush(DEADLINE_S) == 0  # written, inside the open transaction

    kafkito.advance(60_000 + 10_000)  # its timeout, and the coordinator's next scan for timed-out ones

    with pytest.raises(KafkaException):  # the coordinator aborted it and fenced this epoch
        producer.commit_transaction(DEADLINE_S)
    consumer = KafkaConsumer(
        bootstrap_servers=kafkito.bootstrap_servers,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )
    tp = TopicPartition("txns", 0)
    consumer.assign([tp])
    # The abort marker moved the last stable offset past the batch: nothing is left to read.
    wait_until(lambda: consumer.end_offsets([tp])[tp] == 2, what="the abort marker")
    assert consumer.poll(500) == {}
    consumer.close()


@pytest.mark.kafkito(offsets_retention_minutes=60, offsets_retention_check_interval_ms=60_000)
def test_committed_offsets_of_an_empty_group_expire_when_the_clock_passes_the_retention(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("archive")
    tp = TopicPartition("archive", 0)
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers)
    producer.send("archive", b"x").get(DEADLINE_S)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="archivists")
    consumer.assign([tp])
    consumer.commit({tp: OffsetAndMetadata(1, "", -1)})
    assert consumer.committed(tp) == 1

    kafkito.advance(30 * 60_000)
    assert consumer.committed(tp) == 1  # half the retention: still there
    kafkito.advance(31 * 60_000)
    assert consumer.committed(tp) is None
    consumer.close()


@pytest.mark.kafkito(offsets_retention_minutes=60, offsets_retention_check_interval_ms=60_000)
@pytest.mark.parametrize("kill", [False, True], ids=["graceful", "kill"])
def test_a_restart_keeps_the_time_the_clock_was_advanced_by(kafkito: KafkitoHandle, kill: bool) -> None:
    tp = TopicPartition("archive", 0)
    kafkito.create_topic("archive")
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="archivists")
    consumer.commit({tp: OffsetAndMetadata(1, "", -1)})
    consumer.close()
    advanced = kafkito.advance(30 * 60_000)

    kafkito.restart(kill=kill)

    assert kafkito.now_ms() >= advanced
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, group_id="archivists")
    assert consumer.committed(tp) == 1  # reloaded with its commit time, 30 min ago in broker time
    kafkito.advance(31 * 60_000)
    assert consumer.committed(tp) is None
    consumer.close()


def test_a_kip848_member_killed_without_leaving_is_evicted_right_after_advancing_its_session(
    kafkito: KafkitoHandle,
) -> None:
    kafkito.create_topic("jobs", partitions=2)
    proc = subprocess.Popen(
        [sys.executable, "-c", MEMBER, kafkito.bootstrap_servers, "new-workers", "jobs", "consumer"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("assigned 2")
        group = kafkito.wait_for_group("new-workers", "Stable", members=1)
        assert group["type"] == "consumer"
    finally:
        proc.kill()  # no leave heartbeat: only the session timeout can tell
        proc.wait()
    assert len(kafkito.describe_group("new-workers")["members"]) == 1

    kafkito.advance(45_000)  # group.consumer.session.timeout.ms

    after = kafkito.describe_group("new-workers")
    assert after["state"] == "Empty" and after["members"] == []
    assert after["generation"] > group["generation"]
