"""Kafka Streams 4.4 applications against kafkito: a word count with a repartition topic and a state store
(tests/kafka_reference/src/main/java/org/kafkito/streams/WordCount.java), exactly once
(`processing.guarantee=exactly_once_v2`), run as three instances on six partitions with
`group.protocol=streams` while one leaves, one is SIGKILLed and one joins, then across a broker restart;
and the same application with the classic protocol. The output, read with read_committed, is exactly
what the input implies: each word's counts are 1, 2, ... N, once each. The group as the Java Admin client
(`describeStreamsGroups`) and `kafkito groups describe` show it. Marked slow (JVMs)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.kafka_reference import PROJECT, ReferenceUnavailable, classpath, java
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

JAR = PROJECT / "target" / "kafka-reference-1.jar"
PARTITIONS = 6
WORDS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "iris", "juniper")
JVM = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
# Short member sessions and transaction clean-ups, so that a SIGKILLed instance's tasks and its open
# transaction are given up within seconds (Kafka's defaults: 45 s, 10 s); the rest is Kafka's defaults.
BROKER = {
    "group.streams.session.timeout.ms": "6000",
    "group.streams.min.session.timeout.ms": "6000",
    "group.streams.heartbeat.interval.ms": "1000",
    "group.streams.min.heartbeat.interval.ms": "1000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
}
WAIT_S = 120.0  # how long to wait for the applications on a busy machine: a safety net, not a measure


class App:
    """One instance of the word count (a JVM), its stdout lines collected."""

    def __init__(
        self, bootstrap: str, app_id: str, source: str, sink: str, protocol: str, state: Path
    ) -> None:
        argv = [java(), *JVM, "-Dlog4j2.level=warn", "-cp", f"{JAR}:{classpath()}"]
        argv += ["org.kafkito.streams.WordCount", bootstrap, app_id, source, sink, protocol, str(state)]
        argv += ["exactly_once_v2"]
        log = open(state.parent / f"{state.name}.log", "wb")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log)
        log.close()
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw.decode().strip())

    def running(self) -> bool:
        assert not any(line.startswith("ERROR") for line in self.lines), self.lines
        return bool(self.lines) and self.lines[-1] == "STATE RUNNING"

    def close(self) -> None:
        """SIGTERM: KafkaStreams.close(), which leaves the group."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=WAIT_S)
        assert "CLOSED" in self.lines, self.lines

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)


class Output:
    """The output topic read with read_committed: each word's counts in the order they were written."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        config = {"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader"}
        self.consumer = Consumer(config | {"isolation.level": "read_committed", "enable.auto.commit": False})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self.counts: dict[str, list[int]] = defaultdict(list)

    def read_until(self, expected: Counter[str]) -> None:
        def complete() -> bool:
            for message in self.consumer.consume(500, timeout=0.5):
                if message.error() is None:
                    word, count = message.key().decode(), int.from_bytes(message.value(), "big", signed=True)
                    self.counts[word].append(count)
            return {w: c[-1] for w, c in self.counts.items()} == dict(expected)

        wait_until(complete, WAIT_S, f"the counts {dict(expected)}, got {dict(self.counts)}")
        # Exactly once: every count of every word once, in order, whatever failed meanwhile.
        assert {w: c for w, c in self.counts.items()} == {
            w: list(range(1, n + 1)) for w, n in expected.items()
        }

    def close(self) -> None:
        self.consumer.close()


class Input:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.topic, self.sent, self.random = topic, Counter[str](), random.Random(31)

    def send(self, lines: int) -> Counter[str]:
        for i in range(lines):
            words = [self.random.choice(WORDS) for _ in range(3)]
            self.sent.update(words)
            self.producer.produce(self.topic, " ".join(words).upper().encode(), key=f"k{i}".encode())
        assert self.producer.flush(30) == 0
        return Counter(self.sent)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[ProcessBroker]:
    try:
        classpath()
        java()
    except ReferenceUnavailable as exc:
        pytest.fail(f"Kafka Streams needs the reference's classpath and Java: {exc}")
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: run `make install-clients`")
    b = ProcessBroker(tmp_path / "kafkito", props=BROKER).start()
    yield b
    b.stop()


def _group(bootstrap: str, group: str) -> tuple[str, int]:
    with WireClient(bootstrap) as client:
        g = client.request(89, 1, group_ids=[group], include_authorized_operations=False,
                           include_topology_description=False).groups[0]  # fmt: skip
    return g.group_state, len(g.members)


def _stable_with(bootstrap: str, group: str, members: int) -> None:
    wait_until(
        lambda: _group(bootstrap, group) == ("Stable", members), WAIT_S, f"{group} Stable, {members} members"
    )


def _java_describe(bootstrap: str, group: str) -> dict[str, object]:
    argv = [java(), *JVM, "-Dlog4j2.level=warn", "-cp", f"{JAR}:{classpath()}"]
    out = subprocess.run([*argv, "org.kafkito.streams.DescribeGroup", bootstrap, group],
                         capture_output=True, timeout=WAIT_S, check=True)  # fmt: skip
    described: dict[str, object] = json.loads(out.stdout.decode().strip().splitlines()[-1])
    return described


def test_word_count_with_the_streams_protocol_exactly_once(broker: ProcessBroker, tmp_path: Path) -> None:
    boot = broker.bootstrap
    app_id, source, sink = "wordcount", "lines", "counts"
    for topic in (source, sink):
        create_topic(boot, topic, PARTITIONS)
    start = lambda name: App(boot, app_id, source, sink, "streams", tmp_path / name)  # noqa: E731
    apps = {name: start(name) for name in ("a", "b", "c")}
    wait_until(lambda: all(app.running() for app in apps.values()), WAIT_S, "three instances running")
    _stable_with(boot, app_id, 3)
    lines, output = Input(boot, source), Output(boot, sink)
    output.read_until(lines.send(60))

    apps.pop("b").close()  # leaves the group: its tasks move at once
    _stable_with(boot, app_id, 2)
    output.read_until(lines.send(60))

    apps.pop("c").kill()  # its tasks move once its session times out, its transaction is aborted
    sent = lines.send(60)
    apps["d"] = start("d")
    output.read_until(sent)
    _stable_with(boot, app_id, 2)

    described = _java_describe(boot, app_id)
    assert (described["state"], described["topologyEpoch"]) == ("Stable", 0)
    members = described["members"]
    assert isinstance(members, dict) and len(members) == 2
    tasks = sorted((s, p) for m in members.values() for s, ps in m["activeTasks"].items() for p in ps)
    assert tasks == sorted((s, p) for s in ("0", "1") for p in range(PARTITIONS))  # each task once
    command = [sys.executable, "-m", "kafkito", "groups", "describe", app_id, "--json"]
    command += ["--bootstrap-server", boot]
    cli = subprocess.run(command, capture_output=True, timeout=WAIT_S, check=True)
    rows = json.loads(cli.stdout)[app_id]
    owned = {(r["topic"], r["partition"]) for r in rows if r["consumer_id"]}
    assert {(source, p) for p in range(PARTITIONS)} <= owned
    assert all(r["lag"] == 0 for r in rows if r["topic"] == source)

    for app in apps.values():
        app.close()
    output.close()
    broker.restart()  # the group, its offsets, the changelog and the output survive it
    output = Output(boot, sink)
    again = start("e")
    wait_until(again.running, WAIT_S, "an instance after the restart")
    output.read_until(lines.send(30))
    again.close()
    output.close()


def test_word_count_with_the_classic_protocol_exactly_once(broker: ProcessBroker, tmp_path: Path) -> None:
    boot = broker.bootstrap
    source, sink = "lines-classic", "counts-classic"
    for topic in (source, sink):
        create_topic(boot, topic, PARTITIONS)
    apps = [App(boot, "wordcount-classic", source, sink, "classic", tmp_path / n) for n in ("a", "b")]
    wait_until(lambda: all(app.running() for app in apps), WAIT_S, "two classic instances running")
    lines, output = Input(boot, source), Output(boot, sink)
    output.read_until(lines.send(60))
    apps[1].close()  # leaves: its tasks move to the other (a JoinGroup rebalance)
    output.read_until(lines.send(60))
    apps[0].close()
    output.close()
