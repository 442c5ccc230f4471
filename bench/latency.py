"""End-to-end produce-to-consume latency, one record at a time, against kafkito and Tansu.

Run: .venv/bin/python bench/latency.py [--records 2000] [--runs 3] [--wait-ms 500] [--size 1024]
                                       [--only kafkito|tansu] [--baseline DIR]

Each run starts a fresh broker process on 127.0.0.1 and creates a topic of one partition. A
confluent-kafka consumer is assigned the partition at its end (no group) and long-polls it from a
thread of its own: `fetch.wait.max.ms` = `--wait-ms`, `fetch.min.bytes` 1, so an empty fetch parks
in the broker until a record arrives or the wait ends. A producer (acks=all, linger.ms=0) then sends
`--records` records one after another: each record carries its send time (time.perf_counter, taken
just before `produce()`), the producer waits for its delivery report, and the next record is not
sent before the consumer thread has received this one. Latency = receive time - send time, in ms.
Both clients disable Nagle (`socket.nagle.disable`), as latency-minded deployments do.

Before the timed records: `--warmup` records go through untimed, then a check that the consumer
really long-polls: over 2 idle seconds a separate consumer of the same settings may send at most
a few Fetch requests (librdkafka's statistics count them); a broker that answers empty fetches at
once makes it spin, which the table shows (idle fetches/s) and flags ("NOT long-polling").
Also reported: the producer's acknowledgement latency (send -> delivery report) and the broker's CPU
per record (over the whole timed loop, its idle waits included: a slow broker idles longer). A run
that fails (a record not acknowledged or not received in 30 s) is reported and left out.

Tansu 0.6 parks an empty fetch but does not answer it when a record arrives: in a smoke run its
latency was about half of `--wait-ms` (250 ms at 500, 51 ms at 100), at ~0.25 s a record, so
`--records 2000 --runs 3` takes ~30 minutes with Tansu (`--only kafkito` for quick looks).

`--baseline DIR` also measures the kafkito of another checkout installed in `DIR/.venv`,
interleaved run by run. The table reports the median over runs of each percentile.
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from procs import (  # bench/procs.py (scripts run with bench/ on sys.path)
    TANSU,
    BrokerCommand,
    add_broker_options,
    brokers_to_measure,
    cpu_seconds,
    running,
)

TOPIC = "latency"
_SENT = struct.Struct(">d")  # the record's value starts with its send time


@dataclass(frozen=True)
class Result:
    p50: float  # end-to-end, ms
    p99: float
    p999: float
    ack_p50: float  # send -> delivery report, ms
    ack_p99: float
    idle_fetches: float  # Fetch requests per idle second
    cpu_us: float  # broker CPU microseconds per record


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def consumer_config(bootstrap: str, wait_ms: int) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "latency",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": wait_ms,
        "fetch.min.bytes": 1,
        "socket.nagle.disable": True,
    }


def create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    deadline = time.monotonic() + 30
    while not admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions:
        if time.monotonic() > deadline:
            raise TimeoutError("topic metadata did not appear")
        time.sleep(0.05)


def idle_fetch_rate(bootstrap: str, wait_ms: int, seconds: float = 2.0) -> float:
    """Fetch requests per second that a consumer at the end of the idle partition sends."""
    from confluent_kafka import OFFSET_END, Consumer, TopicPartition

    counts: list[tuple[float, int]] = []

    def on_stats(raw: str) -> None:
        stats = json.loads(raw)
        fetches = sum(
            b.get("req", {}).get("Fetch", 0) for b in stats["brokers"].values() if b.get("nodeid", -1) >= 0
        )
        counts.append((time.perf_counter(), fetches))

    config = consumer_config(bootstrap, wait_ms)
    consumer = Consumer({**config, "statistics.interval.ms": 500, "stats_cb": on_stats})
    consumer.assign([TopicPartition(TOPIC, 0, OFFSET_END)])
    settle = time.perf_counter() + 1.0
    while time.perf_counter() < settle:  # joins the broker, resolves the end offset, starts fetching
        consumer.poll(0.1)
    start = len(counts)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(counts) < start + 2:
        consumer.poll(0.1)
    consumer.close()
    (t0, n0), (t1, n1) = counts[start], counts[-1]
    return (n1 - n0) / (t1 - t0)


class Receiver(threading.Thread):
    """Long-polls the partition; for each record, its end-to-end latency in seconds."""

    def __init__(self, consumer: Any) -> None:
        super().__init__(daemon=True)
        self.consumer = consumer
        self.latencies: list[float] = []
        self.received = threading.Semaphore(0)
        self.stopping = False
        self.error: str | None = None

    def run(self) -> None:
        while not self.stopping:
            msg = self.consumer.poll(0.2)
            if msg is None:
                continue
            now = time.perf_counter()
            if msg.error() is not None:
                self.error = str(msg.error())
                continue
            self.latencies.append(now - _SENT.unpack_from(msg.value())[0])
            self.received.release()


def measure(bootstrap: str, pid: int, records: int, warmup: int, size: int, wait_ms: int) -> Result:
    from confluent_kafka import OFFSET_END, Consumer, Producer, TopicPartition

    create_topic(bootstrap)
    idle = idle_fetch_rate(bootstrap, wait_ms)
    consumer = Consumer(consumer_config(bootstrap, wait_ms))
    consumer.assign([TopicPartition(TOPIC, 0, OFFSET_END)])
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "socket.nagle.disable": True}
    )
    receiver = Receiver(consumer)
    receiver.start()
    padding = bytes(max(0, size - _SENT.size))
    acks: list[float] = []
    failed: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failed.append(err)

    def one() -> None:
        sent = time.perf_counter()
        producer.produce(TOPIC, value=_SENT.pack(sent) + padding, on_delivery=on_delivery)
        if producer.flush(30) or failed:
            raise RuntimeError(f"record not acknowledged: {failed[:1]}")
        acks.append(time.perf_counter() - sent)
        if not receiver.received.acquire(timeout=30):
            raise TimeoutError(f"record not received: {receiver.error}")

    try:
        time.sleep(1.0)  # the consumer resolves its end offset and parks its first fetch
        for _ in range(warmup):
            one()
        receiver.latencies.clear()
        acks.clear()
        cpu0 = cpu_seconds(pid)
        for _ in range(records):
            one()
        cpu = cpu_seconds(pid) - cpu0
    finally:
        receiver.stopping = True
        receiver.join()
        consumer.close()
    lat = [x * 1000 for x in receiver.latencies]
    if len(lat) != records:
        raise RuntimeError(f"received {len(lat)} of {records} records")
    ack = [x * 1000 for x in acks]
    return Result(
        percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 0.999),
        percentile(ack, 0.5), percentile(ack, 0.99), idle, cpu / records * 1e6,
    )  # fmt: skip


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=2000, help="timed records per run (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed records first (default 200)")
    parser.add_argument("--size", type=int, default=1024, help="record value bytes (default 1024)")
    parser.add_argument("--wait-ms", type=int, default=500, help="consumer fetch.wait.max.ms (default 500)")
    parser.add_argument("--runs", type=int, default=3)
    add_broker_options(parser)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    brokers: list[tuple[str, BrokerCommand]] = brokers_to_measure(args.only, args.baseline, kafka=args.kafka)
    results: dict[str, list[Result]] = {name: [] for name, _ in brokers}
    for run in range(args.runs):
        for name, command in brokers:  # interleaved, so all see the same machine noise
            try:
                with running(command) as (bootstrap, pid):
                    r = measure(bootstrap, pid, args.records, args.warmup, args.size, args.wait_ms)
            except (RuntimeError, TimeoutError) as exc:  # reported, and left out of the medians
                print(f"run {run + 1}: {name}: FAILED: {exc}", file=sys.stderr)
                continue
            results[name].append(r)
            print(f"run {run + 1}: {name}: p50 {r.p50:.3f} ms, p99 {r.p99:.3f} ms, p99.9 {r.p999:.3f} ms,"
                  f" ack p50 {r.ack_p50:.3f} ms, idle fetches {r.idle_fetches:.1f}/s,"
                  f" {r.cpu_us:.0f} us broker CPU/record", file=sys.stderr)  # fmt: skip
    _report(args, results)


def _report(args: argparse.Namespace, results: dict[str, list[Result]]) -> None:
    medians = {
        name: [statistics.median(getattr(r, f) for r in rs) for f in Result.__dataclass_fields__]
        for name, rs in results.items()
        if rs
    }
    base = medians.get(TANSU)
    print(f"End-to-end latency, {args.records} records of {args.size} B one at a time, acks=all,"
          f" fetch.wait.max.ms={args.wait_ms}, median of the runs completed (of {args.runs})")  # fmt: skip
    print("| broker | runs | e2e p50 (ms) | e2e p99 (ms) | e2e p99.9 (ms) | p50 vs Tansu | p99 vs Tansu "
          "| ack p50 (ms) | ack p99 (ms) | idle fetches/s | broker CPU per record (us) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    parked = 2 * 1000 / args.wait_ms + 2  # fetches/s a consumer parked in the broker may send
    for name, (p50, p99, p999, a50, a99, idle, cpu) in medians.items():
        label = name if idle <= parked else f"{name} NOT long-polling"
        ratio = f"{p50 / base[0]:.3g}x | {p99 / base[1]:.3g}x" if base else "- | -"
        print(f"| {label} | {len(results[name])} | {p50:.3f} | {p99:.3f} | {p999:.3f} | {ratio}"
              f" | {a50:.3f} | {a99:.3f} | {idle:.1f} | {cpu:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
