"""Many clients at once: 8 producer and 8 consumer processes on one 4-partition topic, kafkito beside Tansu.

Run: .venv/bin/python bench/clients.py [--mb 100] [--runs 3] [--producers 8] [--consumers 8]
                                       [--partitions 4] [--only kafkito|tansu] [--baseline DIR]

Each client is an OS process of its own (multiprocessing, spawn) running confluent-kafka, so the
clients are not held back by one Python interpreter and the broker is what is loaded. Records are
1 KiB; producers use acks=all, linger.ms=5, no compression, keyless records (librdkafka's sticky
partitioner spreads them). Each run starts a fresh broker (kafkito on disk in a temp dir, Tansu with
its memory engine) and goes through three phases, each timed from one "go" signal given once every
client process is connected to the broker (each producer has had one record acknowledged on a
topic of its own, each consumer has asked for offsets): process start-up, connections and group
formation are not timed.

1. produce: the producers write `--mb` MiB between them (an equal share each) to topic `bench`,
   until every record is acknowledged. Reported: aggregate MB/s, broker CPU s per GiB produced.
2. fan-out read: every consumer reads all of `bench` from the beginning (assigned every partition),
   as `--consumers` independent applications catching up would. Reported: aggregate MB/s over
   consumers x `--mb`, broker CPU s per GiB consumed.
3. live: the consumers subscribe to a fresh topic `live` in consumer groups of `--partitions`
   members each (8 consumers, 4 partitions: two applications of 4 members, each owning one
   partition; one group of 8 would leave 4 members idle), and once every group is stable the
   producers write `--mb` MiB into it while the groups read it as it arrives. Reported: aggregate
   produce MB/s, aggregate consume MB/s (groups x `--mb` over the time until every group has read
   everything), and broker CPU s per GiB moved (produced + consumed: the two directions share the
   broker at once, so its CPU cannot be split between them).

Counts are verified, so a broken broker cannot look fast: every record must be acknowledged without
error, and the delivery reports' offsets must fill each partition from 0 with no gap or duplicate;
every consumer (phase 2) and every group (phase 3) must have read each partition exactly once,
offsets 0 to its end. The end offsets come from the delivery reports, not ListOffsets: in a smoke
run Tansu 0.6 answered ListOffsets(latest) with less than the records it held and served. A run
that fails a check is reported with its reason and left out of the medians (in one smoke run all
eight of Tansu's fan-out readers stopped 264 records short of the end; the next runs did not).
`--baseline DIR` also measures the kafkito of another checkout installed in `DIR/.venv`,
interleaved run by run. The tables report medians.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import statistics
import sys
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
from producing import produce_waiting  # bench/producing.py

RECORD = 1024
WARMUP = "warmup"  # each producer's first record goes here, untimed
GIB = 1 << 30
PHASE_TIMEOUT_S = 600
STALL_S = 30  # a phase fails when no record is acknowledged or read for this long


@dataclass(frozen=True)
class Result:
    produce_mbs: float
    produce_cpu: float  # broker CPU s per GiB produced
    read_mbs: float
    read_cpu: float  # broker CPU s per GiB consumed
    live_produce_mbs: float
    live_consume_mbs: float
    live_cpu: float  # broker CPU s per GiB moved (in + out)


# --- the client processes ---------------------------------------------------------------------


def producer_main(
    index: int, bootstrap: str, topic: str, count: int, messages: Any, go: Any, compression: str = "none"
) -> None:
    """Produce `count` 1 KiB records after `go`; report when the last one is acknowledged."""
    from confluent_kafka import Producer

    failed: list[str] = []
    delivered = 0
    ends: dict[int, list[int]] = {}  # partition -> [highest offset acknowledged + 1, records acknowledged]

    def on_delivery(err: Any, msg: Any) -> None:
        nonlocal delivered
        if err is not None:
            failed.append(str(err))
            return
        delivered += 1
        end = ends.setdefault(msg.partition(), [0, 0])
        end[0], end[1] = max(end[0], msg.offset() + 1), end[1] + 1

    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "compression.type": compression}
    )
    # Random bytes do not compress: with a codec, half of each record repeats (about 2:1, as text does).
    payload = os.urandom(RECORD) if compression == "none" else os.urandom(RECORD // 2) * 2
    producer.produce(WARMUP, value=payload)  # connects to the leader and warms the produce path
    if producer.flush(60):
        messages.put(("error", index, f"producer {index}: warm-up record not acknowledged"))
        return
    messages.put(("ready", index))
    go.wait()
    for _ in range(count):
        produce_waiting(producer, topic, payload, on_delivery=on_delivery)
        producer.poll(0)
    left = producer.flush(PHASE_TIMEOUT_S)
    end = time.monotonic()
    if left or failed or delivered != count:
        messages.put(("error", index, f"producer {index}: {delivered} of {count} acknowledged, "
                      f"{left} left, failures {failed[:3]}"))  # fmt: skip
        return
    messages.put(("produced", index, end, {p: tuple(e) for p, e in ends.items()}))


def consumer_main(
    index: int, bootstrap: str, topic: str, group: str, subscribe: bool, messages: Any, go: Any, stop: Any,
    progress: Any,
) -> None:  # fmt: skip
    """Read `topic` until `stop`: by subscription in `group`, or assigned every partition from the
    beginning once `go` is set. Keeps progress[index] at the records read; reports per-partition
    (first offset, last offset, count) at the end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})  # fmt: skip
    partitions = len(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)  # connects to the leader
    if subscribe:
        consumer.subscribe(
            [topic],
            on_assign=lambda _c, tps: messages.put(("assigned", index, [tp.partition for tp in tps])),
            on_revoke=lambda _c, _tps: messages.put(("assigned", index, [])),
        )
    messages.put(("ready", index))
    if not subscribe:
        go.wait()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen: dict[int, list[int]] = {}  # partition -> [first offset, last offset, count]
    total = 0
    while not stop.is_set():
        for m in consumer.consume(num_messages=100, timeout=0.1):
            if m.error() is not None:
                messages.put(("error", index, f"consumer {index}: {m.error()}"))
                continue
            offset = m.offset()
            assert offset is not None
            partition = m.partition()
            assert partition is not None
            s = seen.get(partition)
            if s is None:
                seen[partition] = [offset, offset, 1]
            else:
                s[0], s[1], s[2] = min(s[0], offset), max(s[1], offset), s[2] + 1
            total += 1
        progress[index] = total
    consumer.close()
    messages.put(("read", index, {p: tuple(s) for p, s in seen.items()}))


# --- the parent: one phase ---------------------------------------------------------------------


class Phase:
    """Starts the client processes of one phase, gives the go, and times it."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.bootstrap, self.topic = bootstrap, topic
        self.messages: Any = self.ctx.Queue()
        self.go, self.stop = self.ctx.Event(), self.ctx.Event()
        self.processes: list[Any] = []
        self.producers: list[int] = []
        self.groups: list[list[int]] = []
        self.progress: Any = None
        self.assigned: dict[int, list[int]] = {}
        self.produced: dict[int, float] = {}
        self.acknowledged: dict[int, dict[int, tuple[int, int]]] = {}  # producer -> partition -> (end, n)
        self.read: dict[int, dict[int, tuple[int, int, int]]] = {}
        self.ready = 0
        self.partitions = 0

    def add_producers(self, n: int, records: int, compression: str = "none") -> None:
        for i in range(n):
            count = records // n + (1 if i < records % n else 0)
            self._spawn(producer_main, len(self.processes), self.bootstrap, self.topic, count,
                        self.messages, self.go, compression)  # fmt: skip
            self.producers.append(len(self.processes) - 1)

    def add_consumers(self, groups: int, members: int, subscribe: bool) -> None:
        self.progress = self.ctx.Array("q", len(self.processes) + groups * members, lock=False)
        for g in range(groups):
            self.groups.append([])
            for _ in range(members):
                index = len(self.processes)
                self._spawn(consumer_main, index, self.bootstrap, self.topic, f"{self.topic}-{g}",
                            subscribe, self.messages, self.go, self.stop, self.progress)  # fmt: skip
                self.groups[-1].append(index)

    def _spawn(self, target: Any, *args: Any) -> None:
        process = self.ctx.Process(target=target, args=args, daemon=True)
        process.start()
        self.processes.append(process)

    def _drain(self, timeout: float = 0.005) -> None:
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            if not all(p.is_alive() or p.exitcode == 0 for p in self.processes):
                raise RuntimeError("a client process died") from None
            return
        kind, index, *rest = message
        if kind == "error":
            raise RuntimeError(rest[0])
        if kind == "ready":
            self.ready += 1
        elif kind == "assigned":
            self.assigned[index] = rest[0]
        elif kind == "produced":
            self.produced[index] = rest[0]
            self.acknowledged[index] = rest[1]
        elif kind == "read":
            self.read[index] = rest[0]

    def _stable(self, subscribe: bool) -> bool:
        if not subscribe:
            return True
        partitions = sorted(p for group in self.groups for m in group for p in self.assigned.get(m, []))
        everyone = all(m in self.assigned for group in self.groups for m in group)
        return everyone and partitions == sorted(list(range(self.partitions)) * len(self.groups))

    def run(
        self, pid: int, records: int, partitions: int, subscribe: bool = False
    ) -> tuple[float, float, float]:
        """Seconds until every record is acknowledged, until every group has read them all, and
        the broker's CPU seconds over the phase (0 for a side with no clients)."""
        try:
            return self._run(pid, records, partitions, subscribe)
        finally:
            self.stop.set()
            end = time.monotonic() + 10
            for process in self.processes:  # after a failure, some may still wait or read
                process.join(max(0.0, end - time.monotonic()))
                if process.is_alive():
                    process.terminate()
                    process.join(5)

    def _run(self, pid: int, records: int, partitions: int, subscribe: bool) -> tuple[float, float, float]:
        self.partitions = partitions
        deadline = time.monotonic() + PHASE_TIMEOUT_S
        while self.ready < len(self.processes) or not self._stable(subscribe):
            self._drain()
            if time.monotonic() > deadline:
                raise TimeoutError(f"clients not ready: {self.ready}, assignments {self.assigned}")
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        self.go.set()
        read_at = self._await_all(records, deadline)
        cpu = cpu_seconds(pid) - cpu0
        self.stop.set()
        while len(self.read) < sum(map(len, self.groups)):
            self._drain(1.0)
            if time.monotonic() > deadline:
                raise TimeoutError("consumers did not report what they read")
        produced = max(self.produced.values(), default=t0) - t0
        return produced, max(read_at, default=t0) - t0, cpu

    def _await_all(self, records: int, deadline: float) -> list[float]:
        read_at: dict[int, float] = {}
        last, moved = (), time.monotonic()
        while len(self.produced) < len(self.producers) or len(read_at) < len(self.groups):
            self._drain()
            now = time.monotonic()
            progress = tuple(sum(self.progress[m] for m in ms) for ms in self.groups)
            for g, read in enumerate(progress):
                if g not in read_at and read >= records:
                    read_at[g] = now
            if progress != last:
                last, moved = progress, now
            elif now > (min(deadline, moved + STALL_S) if self.groups else deadline):
                raise TimeoutError(f"{len(self.produced)} of {len(self.producers)} producers done, "
                                   f"groups read {list(progress)} of {records} records")  # fmt: skip
        return list(read_at.values())

    def verify_reads(self, ends: list[int]) -> None:
        """Each group (or lone consumer) read every partition exactly once, offsets 0 .. end - 1."""
        for g, members in enumerate(self.groups):
            got: dict[int, list[int]] = {}
            for m in members:
                for p, (first, last, count) in self.read[m].items():
                    s = got.setdefault(p, [first, last, 0])
                    s[0], s[1], s[2] = min(s[0], first), max(s[1], last), s[2] + count
            for p, end in enumerate(ends):
                first, last, count = got.get(p, [0, -1, 0])
                if (first, last + 1, count) != (0, end, end):
                    raise RuntimeError(f"group {g} partition {p}: read offsets {first}..{last} ({count} "
                                       f"records), expected 0..{end - 1}")  # fmt: skip

    def end_offsets(self, records: int) -> list[int]:
        """Each partition's end offset, from the producers' delivery reports: the records acknowledged
        must add up to `records`, and fill each partition from offset 0 with no gap or duplicate."""
        ends = [0] * self.partitions
        counts = [0] * self.partitions
        for by_partition in self.acknowledged.values():
            for p, (end, n) in by_partition.items():
                ends[p], counts[p] = max(ends[p], end), counts[p] + n
        if sum(counts) != records or ends != counts:
            raise RuntimeError(f"{self.topic}: acknowledged {counts} records a partition, ending at {ends}; "
                               f"expected {records} in all, offsets 0 to the end")  # fmt: skip
        return ends


# --- one run against one broker ----------------------------------------------------------------


def create_topics(bootstrap: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [NewTopic(t, partitions, 1) for t in ("bench", "live", WARMUP)]
    for topic, future in admin.create_topics(topics).items():
        future.result(30)
        deadline = time.monotonic() + 30
        while len(admin.list_topics(topic, timeout=10).topics[topic].partitions) < partitions:
            if time.monotonic() > deadline:
                raise TimeoutError("topic metadata did not appear")
            time.sleep(0.05)


def run_once(command: BrokerCommand, args: argparse.Namespace) -> Result:
    records = args.mb * (1 << 20) // RECORD
    gib = records * RECORD / GIB
    mib = records * RECORD / (1 << 20)
    with running(command) as (bootstrap, pid):
        create_topics(bootstrap, args.partitions)
        produce = Phase(bootstrap, "bench")
        produce.add_producers(args.producers, records)
        p_s, _, p_cpu = produce.run(pid, records, args.partitions)
        ends = produce.end_offsets(records)

        read = Phase(bootstrap, "bench")
        read.add_consumers(args.consumers, 1, subscribe=False)
        _, r_s, r_cpu = read.run(pid, records, args.partitions)
        read.verify_reads(ends)

        live = Phase(bootstrap, "live")
        groups = max(1, args.consumers // args.partitions)
        live.add_consumers(groups, args.consumers // groups, subscribe=True)
        live.add_producers(args.producers, records)
        lp_s, lc_s, l_cpu = live.run(pid, records, args.partitions, subscribe=True)
        live.verify_reads(live.end_offsets(records))
    return Result(
        mib / p_s, p_cpu / gib, args.consumers * mib / r_s, r_cpu / (args.consumers * gib),
        mib / lp_s, groups * mib / lc_s, l_cpu / ((1 + groups) * gib),
    )  # fmt: skip


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100, help="MiB the producers write per phase (default 100)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--consumers", type=int, default=8)
    parser.add_argument("--partitions", type=int, default=4)
    add_broker_options(parser)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    brokers = brokers_to_measure(args.only, args.baseline, kafka=args.kafka)
    results: dict[str, list[Result]] = {name: [] for name, _ in brokers}
    failures: dict[str, list[str]] = {name: [] for name, _ in brokers}
    for run in range(args.runs):
        for name, command in brokers:  # interleaved, so all see the same machine noise
            try:
                r = run_once(command, args)
            except (RuntimeError, TimeoutError) as exc:  # reported, and left out of the medians
                failures[name].append(str(exc))
                print(f"run {run + 1}: {name}: FAILED: {exc}", file=sys.stderr)
                continue
            results[name].append(r)
            print(f"run {run + 1}: {name}: produce {r.produce_mbs:.1f} MB/s ({r.produce_cpu:.2f} CPU s/GiB),"
                  f" fan-out read {r.read_mbs:.1f} MB/s ({r.read_cpu:.2f}), live {r.live_produce_mbs:.1f}"
                  f" in / {r.live_consume_mbs:.1f} out MB/s ({r.live_cpu:.2f})", file=sys.stderr)  # fmt: skip
    _report(args, results, failures)


def _report(
    args: argparse.Namespace, results: dict[str, list[Result]], failures: dict[str, list[str]]
) -> None:
    medians = {
        name: [statistics.median(getattr(r, f) for r in rs) for f in Result.__dataclass_fields__]
        for name, rs in results.items()
        if rs
    }
    base = medians.get(TANSU)
    groups = max(1, args.consumers // args.partitions)
    print(f"{args.producers} producer and {args.consumers} consumer processes, {args.partitions} partitions,"
          f" {args.mb} MiB of 1 KiB records per phase, median of {args.runs} runs. Fan-out read: each"
          f" consumer reads the whole topic. Live: {groups} group(s) of {args.consumers // groups} read"
          " while the producers write; its CPU is per GiB in + out.")  # fmt: skip
    print(
        "| broker | produce MB/s | CPU s/GiB produced | fan-out read MB/s | CPU s/GiB consumed "
        "| live produce MB/s | live consume MB/s | live CPU s/GiB moved "
        "| produce / read / live-in vs Tansu | failed runs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (p, pcpu, r, rcpu, lp, lc, lcpu) in medians.items():
        ratio = f"{p / base[0]:.2f}x / {r / base[2]:.2f}x / {lp / base[4]:.2f}x" if base else "-"
        failed = len(failures[name])
        print(f"| {name} | {p:.1f} | {pcpu:.2f} | {r:.1f} | {rcpu:.2f} | {lp:.1f} | {lc:.1f} | {lcpu:.2f} "
              f"| {ratio} | {failed} of {args.runs} |")  # fmt: skip
    for name, reasons in failures.items():
        if not results[name]:
            print(f"| {name} | - | - | - | - | - | - | - | - | {len(reasons)} of {args.runs} |")
        for reason in reasons:
            print(f"- {name} failed a run: {reason}")


if __name__ == "__main__":
    main()
