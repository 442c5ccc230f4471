"""Produce and consume throughput (MB/s) with confluent-kafka, 1 KiB records, against kafkito and Tansu.

Run: .venv/bin/python bench/datapath.py [--mb 100] [--runs 3] [--partitions 1] [--profile FILE]

Each run starts a fresh broker process on 127.0.0.1, creates the topic, produces `--mb` MiB of 1 KiB
records with one batching producer (linger.ms=5, acks=all) until every record is acknowledged, then
reads them all back with one consumer from the beginning. kafkito stores on disk (a temp dir);
Tansu runs with its in-memory storage engine. The table reports medians, the kafkito/Tansu ratio, and
the broker process's CPU seconds per GiB moved (what the broker costs, even when the client is the
bottleneck of the MB/s).
`--large-fetch` sets the consumer for large fetches (`fetch.max.bytes` 50 MiB,
`max.partition.fetch.bytes` 10 MiB) instead of librdkafka's defaults (1 MiB a partition).
With `--profile FILE` kafkito runs under cProfile (slower) and the stats go to FILE.
`--baseline DIR` also measures the broker of another checkout installed in `DIR/.venv`, interleaved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass

from procs import (  # bench/procs.py (scripts run with bench/ on sys.path)
    TANSU,
    BrokerCommand,
    add_broker_options,
    cpu_seconds,
    kafkito_command,
    kafkito_executable,
    running,
    tansu_command,
)
from producing import produce_waiting  # bench/producing.py

RECORD = 1024
TOPIC = "bench"


@dataclass(frozen=True)
class Result:
    produce_mbs: float
    consume_mbs: float
    produce_cpu: float  # broker CPU seconds per GiB moved
    consume_cpu: float


def create_topic(bootstrap: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result(30)
    deadline = time.monotonic() + 30
    while len(admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions) < partitions:
        if time.monotonic() > deadline:
            raise TimeoutError("topic metadata did not appear")
        time.sleep(0.05)


def produce(bootstrap: str, count: int) -> float:
    """Seconds to produce `count` 1 KiB records and have every one acknowledged."""
    from confluent_kafka import Producer

    failed: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            failed.append(err)

    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "compression.type": "none"}
    )
    payload = os.urandom(RECORD)
    producer.list_topics(TOPIC, timeout=10)
    t0 = time.perf_counter()
    for _ in range(count):
        produce_waiting(producer, TOPIC, payload, on_delivery=on_delivery)
        producer.poll(0)
    left = producer.flush(120)
    elapsed = time.perf_counter() - t0
    if left or failed:
        raise RuntimeError(f"{left} records undelivered, {len(failed)} failed: {failed[:3]}")
    return elapsed


LARGE_FETCH = {"fetch.max.bytes": 50 << 20, "max.partition.fetch.bytes": 10 << 20}


def consume(bootstrap: str, count: int, partitions: int, large_fetch: bool = False) -> float:
    """Seconds to read `count` records back from the beginning of every partition."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    config = {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False}
    consumer = Consumer({**config, **(LARGE_FETCH if large_fetch else {})})
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = 0
    t0 = time.perf_counter()
    deadline = t0 + 300
    while seen < count:
        # Small batches: librdkafka's consume() of thousands waits on its queue and halves throughput.
        for m in consumer.consume(num_messages=100, timeout=1.0):
            if m.error() is not None:
                raise RuntimeError(str(m.error()))
            seen += 1
        if time.perf_counter() > deadline:
            raise TimeoutError(f"read {seen} of {count} records")
    elapsed = time.perf_counter() - t0
    consumer.close()
    return elapsed


def run_once(cmd_for_port: BrokerCommand, count: int, partitions: int, large_fetch: bool = False) -> Result:
    mib = count * RECORD / (1 << 20)
    with running(cmd_for_port) as (bootstrap, pid):
        create_topic(bootstrap, partitions)
        cpu0 = cpu_seconds(pid)
        produced = produce(bootstrap, count)
        cpu1 = cpu_seconds(pid)
        consumed = consume(bootstrap, count, partitions, large_fetch)
        cpu2 = cpu_seconds(pid)
    gib = mib / 1024
    return Result(mib / produced, mib / consumed, (cpu1 - cpu0) / gib, (cpu2 - cpu1) / gib)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100, help="MiB of records per run (default 100)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--large-fetch", action="store_true", help="consume with 50 MiB / 10 MiB fetches")
    parser.add_argument("--profile", metavar="FILE", help="run kafkito under cProfile, stats to FILE")
    add_broker_options(parser)
    return parser.parse_args()


def _brokers(args: argparse.Namespace) -> list[tuple[str, BrokerCommand]]:
    """The brokers to measure, by name: this kafkito, the baseline's, Tansu."""

    def kafkito_cmd(port: int, data: str) -> list[str]:
        if args.profile:  # `python -m cProfile -o FILE -m kafkito serve ...`
            serve = kafkito_command("kafkito", port, data)
            return [sys.executable, "-m", "cProfile", "-o", args.profile, "-m", *serve]
        return kafkito_command(kafkito_executable(), port, data)

    def baseline_cmd(port: int, data: str) -> list[str]:
        return kafkito_command(kafkito_executable(args.baseline), port, data)

    def tansu_cmd(port: int, _data: str) -> list[str]:
        return tansu_command(port)

    brokers: list[tuple[str, BrokerCommand]] = []
    if args.only != "tansu":
        brokers.append(("kafkito serve (disk)", kafkito_cmd))
        if args.baseline:
            brokers.append((f"kafkito serve ({args.baseline})", baseline_cmd))
    if args.only != "kafkito":
        brokers.append((TANSU, tansu_cmd))
    return brokers


def main() -> None:
    args = _arguments()
    count = args.mb * (1 << 20) // RECORD
    brokers = _brokers(args)
    results: dict[str, list[Result]] = {name: [] for name, _ in brokers}
    for run in range(args.runs):
        for name, cmd in brokers:  # interleaved, so both see the same machine noise
            r = run_once(cmd, count, args.partitions, args.large_fetch)
            results[name].append(r)
            print(f"run {run + 1}: {name}: produce {r.produce_mbs:.1f} MB/s ({r.produce_cpu:.2f} CPU s/GiB),"
                  f" consume {r.consume_mbs:.1f} MB/s ({r.consume_cpu:.2f} CPU s/GiB)",
                  file=sys.stderr)  # fmt: skip
    _report(args, results)


def _report(args: argparse.Namespace, results: dict[str, list[Result]]) -> None:
    medians = {
        name: [statistics.median(getattr(r, f) for r in rs) for f in Result.__dataclass_fields__]
        for name, rs in results.items()
    }
    base = medians.get(TANSU)
    fetch = "large fetches" if args.large_fetch else "default fetch sizes"
    print(
        f"{args.mb} MiB of 1 KiB records, {args.partitions} partition(s), {fetch}, median of {args.runs} runs"
    )
    print("| broker | produce MB/s | consume MB/s | produce vs Tansu | consume vs Tansu "
          "| broker CPU s/GiB produce | broker CPU s/GiB consume |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, (p, c, pcpu, ccpu) in medians.items():
        ratio = f"{p / base[0]:.2f}x | {c / base[1]:.2f}x" if base else "- | -"
        print(f"| {name} | {p:.1f} | {c:.1f} | {ratio} | {pcpu:.2f} | {ccpu:.2f} |")


if __name__ == "__main__":
    main()
