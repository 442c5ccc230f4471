"""Kafka Connect 4.4 in distributed mode against kafkito: two workers share a source and a sink
connector that move a file's lines through a topic; a SIGKILLed worker's tasks move to the other;
the configs, offsets and status topics survive a broker restart; both the eager and the sessioned
(incremental cooperative, KIP-415 and KIP-507) connect protocols."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.connect.workers import SINK, SOURCE, ConnectWorker
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until

TOPIC = "lines"


def read_all(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every (key, value) of a topic, each partition from its start to its end offset (the offsets
    topic has 25 partitions, the status topic 5)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        consumer.assign(tps)
        ends = consumer.end_offsets(tps)
        consumer.seek_to_beginning(*tps)
        got: list[tuple[bytes | None, bytes | None]] = []
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            for records in consumer.poll(timeout_ms=1000).values():
                got += [(r.key, r.value) for r in records]
        return got
    finally:
        consumer.close()


def append(path: Path, first: int, last: int) -> list[str]:
    lines = [f"line-{i}" for i in range(first, last + 1)]
    with path.open("a") as f:
        f.write("".join(f"{line}\n" for line in lines))
    return lines


def sunk(path: Path) -> list[str]:
    """The values the sink wrote ("topic/partition/offset value" lines)."""
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


def start_connectors(worker: ConnectWorker, source_file: Path, sink_file: Path) -> None:
    worker.put_connector("source", {"connector.class": SOURCE, "file": str(source_file), "topic": TOPIC})
    worker.put_connector("sink", {"connector.class": SINK, "file": str(sink_file), "topics": TOPIC})


def runs_on(worker: ConnectWorker, names: tuple[str, ...], where: set[str]) -> bool:
    tasks = [t for name in names for t in worker.tasks(name)]
    return len(tasks) == len(names) and all(state == "RUNNING" and w in where for state, w in tasks)


@pytest.mark.parametrize("protocol", ["eager", "sessioned"])
def test_two_workers_move_a_file_and_take_over_a_killed_workers_tasks(
    protocol: str, broker: ProcessBroker, workers: Callable[..., ConnectWorker], tmp_path: Path
) -> None:
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    written = append(source_file, 1, 50)
    first, second = workers(broker.bootstrap, protocol), workers(broker.bootstrap, protocol)
    start_connectors(first, source_file, sink_file)
    both = {first.worker_id, second.worker_id}
    wait_until(lambda: runs_on(second, ("source", "sink"), both), 60, "both tasks to run", detail=second.tail)
    wait_until(lambda: set(sunk(sink_file)) == set(written), 60, "the file's lines in the sink's file")

    (victim,) = {w for _, w in second.tasks("source")}
    doomed, survivor = (first, second) if victim == first.worker_id else (second, first)
    doomed.kill()
    wait_until(
        lambda: runs_on(survivor, ("source", "sink"), {survivor.worker_id}),
        90,
        f"the killed worker's tasks to run on {survivor.worker_id}",
        detail=survivor.tail,
    )
    written += append(source_file, 51, 80)
    wait_until(lambda: set(sunk(sink_file)) == set(written), 60, "the lines written after the kill")
    assert Counter(v for _, v in read_all(broker.bootstrap, TOPIC)).keys() == {w.encode() for w in written}


def test_configs_offsets_and_status_survive_a_broker_restart(
    broker: ProcessBroker, workers: Callable[..., ConnectWorker], tmp_path: Path
) -> None:
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    written = append(source_file, 1, 40)
    worker = workers(broker.bootstrap, "sessioned")
    start_connectors(worker, source_file, sink_file)
    wait_until(lambda: set(sunk(sink_file)) == set(written), 60, "the file's lines in the sink's file")
    end = str(source_file.stat().st_size).encode()
    wait_until(
        lambda: any(v is not None and end in v for _, v in read_all(broker.bootstrap, "connect-offsets")),
        60,
        "the source's position after the last line in connect-offsets",
    )
    worker.kill()
    broker.restart()

    configs = read_all(broker.bootstrap, "connect-configs")
    status = read_all(broker.bootstrap, "connect-status")
    assert {b"connector-source", b"connector-sink"} <= {k for k, _ in configs}
    assert {b"status-task-source-0", b"status-connector-sink"} <= {k for k, _ in status}

    fresh = workers(broker.bootstrap, "sessioned")
    assert sorted(fresh.get("/connectors")) == ["sink", "source"]
    written += append(source_file, 41, 60)
    wait_until(lambda: set(sunk(sink_file)) == set(written), 60, "the lines written after the restart")
    # the source resumed from its committed position: no line was read twice
    values = Counter(v for _, v in read_all(broker.bootstrap, TOPIC))
    assert values == Counter(w.encode() for w in written)
