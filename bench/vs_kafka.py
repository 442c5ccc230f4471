"""kafkito beside Apache Kafka 4.4 on this machine (issue 33): every figure of the comparison, both
brokers interleaved in one run, the same clients and settings for both.

Run: .venv/bin/python bench/vs_kafka.py [--runs 3] [--starts 5] [--mb 64] [--suite-tests 50]
                                        [--only-figures start,rss,data,latency,heartbeats,formation,
                                         transactions,share,suite] [--baseline DIR] [--json FILE]

Kafka is the Maven build the tests use as their reference (`make kafka-reference`), one KRaft node
(broker and controller) on loopback, its storage formatted in a temp dir, started with the JVM options
of Kafka's own scripts (-Xmx1G -Xms1G, G1: bench/procs.py KAFKA_JVM_OPTIONS) and its defaults except
what one node needs (replication factors and min ISRs of 1) and `group.initial.rebalance.delay.ms=0`,
which kafkito is given too (a classic group's formation would otherwise measure Kafka's 3 s wait).
Everything else runs at each broker's defaults, KIP-848's `group.consumer.assignment.interval.ms`
(1000 ms) included. kafkito is `kafkito serve` on a temp data dir, its bytecode cached as an installed
broker's is.

Each run starts a fresh broker of each kind per group of figures, in alternating order (kafkito first
on even runs, Kafka first on odd ones); the table reports medians over runs.

- start: spawn to the first answered Metadata v4, `--starts` times per run; Kafka's with its storage
  formatting (a fresh node, as a Testcontainers Kafka starts), and the JVM alone beside it.
- rss: resident memory 1 s after the first Metadata, idle; then with 1,000 topics of one partition
  and 10 classic groups of one member each (confluent-kafka consumers, 100 topics each) joined.
- data: after an untimed warm-up (`--warm-mb` MiB each way: a JVM is measured once it has compiled its
  hot paths), 8 producer processes write `--mb` MiB of 1 KiB records (acks=all, linger.ms=5) to a
  4-partition topic, uncompressed, then another `--mb` MiB lz4 (records half random, ~2:1); then 8
  consumer processes each read the uncompressed topic from the start with librdkafka's default fetch
  sizes (bench/clients.py phases). MB/s and broker CPU s per GiB (of record bytes; lz4 counts them
  uncompressed).
- latency: one 1 KiB record at a time, acks=all, producer to a consumer parked in Fetch
  (bench/latency.py): p50 and p99 in ms.
- heartbeats: 100 classic groups of 10 members formed at once (bench/coordinator.py's members), then
  one connection per group keeping 16 Heartbeat v4 of its members in flight: heartbeats per second.
- formation: a classic group of 50 (JoinGroup v9 / SyncGroup v5, bench/coordinator.py (b)) to all
  synced; then a KIP-848 group of 1,000 members on a topic of 1,000 partitions to every member
  reconciled at the latest epoch (bench/consumer_groups.py (a)), ms.
- transactions: 8 transactional producer processes (confluent-kafka), each with a topic of 3
  partitions, each transaction one 1 KiB record to each partition then commit: commits per second.
- share: 4 confluent-kafka ShareConsumers on one partition of 100,000 100-byte records (implicit
  acknowledgement: each poll accepts the previous poll's records, bench/share_fetch.py): records
  delivered per second, from the go until the last record arrived; the share-partition start offset
  once all have closed (records acknowledged) is reported beside it.
- suite: a generated pytest suite of `--suite-tests` tests (one record produced and its end offset
  read back, kafka-python), each with a fresh broker: kafkito's `kafkito` fixture against a fixture
  that starts a Kafka node per test as Testcontainers does (here without the container). One run each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import clients  # bench/clients.py (scripts run with bench/ on sys.path)
import consumer_groups
import coordinator
import fixture_overhead
import latency
import share_fetch
from kafka.protocol.consumer import HeartbeatRequest
from procs import (
    KAFKA,
    BrokerCommand,
    KafkaPeer,
    free_port,
    kafkito_command,
    kafkito_executable,
    running,
)

from kafkito.protocol.codec import RESPONSES, build_request

COMPARED = {"group.initial.rebalance.delay.ms": "0"}
KAFKITO = "kafkito serve (disk)"
GIB = 1 << 30
MIB = 1 << 20

# Metadata v4 (Kafka 4 no longer takes v0-v3), all topics, no auto-creation; correlation id 1.
_METADATA_V4 = struct.pack(">hhih", 3, 4, 1, 5) + b"bench" + struct.pack(">ib", -1, 0)
METADATA_FRAME = struct.pack(">i", len(_METADATA_V4)) + _METADATA_V4


# --- brokers ------------------------------------------------------------------------------------


def kafkito_broker(checkout: str | None = None) -> BrokerCommand:
    exe = kafkito_executable(checkout)
    extra = [arg for k, v in COMPARED.items() for arg in ("--set", f"{k}={v}")]
    return lambda port, data: kafkito_command(exe, port, data, *extra)


def kafka_broker() -> KafkaPeer:
    return KafkaPeer(dict(COMPARED))


def port_of(bootstrap: str) -> int:
    return int(bootstrap.rsplit(":", 1)[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def first_metadata(port: int, t0: float, timeout: float = 300.0) -> float:
    """Seconds from t0 until 127.0.0.1:port answers a Metadata v4 request."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(METADATA_FRAME)
                head = s.recv(4, socket.MSG_WAITALL)
                if len(head) == 4:
                    s.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                    return time.perf_counter() - t0
        except OSError:
            pass
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError(f"no Metadata answer on port {port}")
        time.sleep(0.002)


# --- start and memory -----------------------------------------------------------------------------


def start_kafkito(command: BrokerCommand, env: dict[str, str]) -> tuple[float, float]:
    """Spawn to first Metadata (s), and the idle RSS (MB) 1 s later, on a fresh data dir."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            command(port, data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        try:
            started = first_metadata(port, t0)
            time.sleep(1.0)
            return started, rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def start_kafka(peer: KafkaPeer) -> tuple[float, float, float]:
    """Format + spawn to first Metadata (s), JVM spawn to first Metadata (s), idle RSS (MB) 1 s later."""
    reference = peer.reference()
    marks: dict[str, float] = {}
    wait_ready = reference._wait_ready

    def timed_wait(timeout: float) -> None:
        marks["spawned"] = time.perf_counter()
        marks["ready"] = marks["spawned"] + first_metadata(reference.port, marks["spawned"])
        wait_ready(timeout)  # the reference's own check: one broker registered

    reference._wait_ready = timed_wait
    t0 = time.perf_counter()
    reference.start(timeout=300)
    try:
        time.sleep(max(0.0, marks["ready"] + 1.0 - time.perf_counter()))
        return marks["ready"] - t0, marks["ready"] - marks["spawned"], rss_mb(reference.proc.pid)
    finally:
        reference.stop()


def loaded_rss(bootstrap: str, pid: int, topics: int = 1000, groups: int = 10) -> float:
    """RSS (MB) once `topics` one-partition topics exist and `groups` classic groups have a member each."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [f"rss-{i:04d}" for i in range(topics)]
    for i in range(0, topics, 100):
        for future in admin.create_topics([NewTopic(n, 1, 1) for n in names[i : i + 100]]).values():
            future.result(120)
    per_group = topics // groups
    consumers = []
    try:
        for g in range(groups):
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rss-group-{g}",
                          "topic.metadata.refresh.interval.ms": 1000})  # fmt: skip
            c.subscribe(names[g * per_group : (g + 1) * per_group])
            consumers.append(c)
        deadline = time.monotonic() + 180
        while not all(c.assignment() for c in consumers):
            for c in consumers:
                c.poll(0.05)
            if time.monotonic() > deadline:
                raise TimeoutError("the 10 groups did not all get an assignment")
        for c in consumers:  # a last round, then idle
            c.poll(0.05)
        time.sleep(1.0)
        return rss_mb(pid)
    finally:
        for c in consumers:
            c.close()


# --- the data path --------------------------------------------------------------------------------


def data_path(bootstrap: str, pid: int, mb: int, warm_mb: int) -> dict[str, float]:
    from confluent_kafka.admin import AdminClient, NewTopic

    records = mb * MIB // clients.RECORD
    gib = records * clients.RECORD / GIB
    mib = records * clients.RECORD / MIB
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = ("bench", "bench-lz4", "warm", "warm-lz4", clients.WARMUP)
    for future in admin.create_topics([NewTopic(t, 4, 1) for t in topics]).values():
        future.result(60)
    time.sleep(0.5)
    warm = warm_mb * MIB // clients.RECORD
    for topic, codec in (("warm", "none"), ("warm-lz4", "lz4")):  # untimed: the JVM compiles its hot paths
        phase = clients.Phase(bootstrap, topic)
        phase.add_producers(8, warm, codec)
        phase.run(pid, warm, 4)
    out: dict[str, float] = {}
    ends: dict[str, list[int]] = {}
    for topic, codec in (("bench", "none"), ("bench-lz4", "lz4")):
        phase = clients.Phase(bootstrap, topic)
        phase.add_producers(8, records, codec)
        seconds, _, cpu = phase.run(pid, records, 4)
        ends[topic] = phase.end_offsets(records)  # every record acknowledged once, no gap
        out[f"produce_{codec}_mbs"] = mib / seconds
        out[f"produce_{codec}_cpu"] = cpu / gib
    read = clients.Phase(bootstrap, "bench")
    read.add_consumers(8, 1, subscribe=False)
    _, seconds, cpu = read.run(pid, records, 4)
    read.verify_reads(ends["bench"])  # each consumer read every partition exactly once
    out["consume_mbs"] = 8 * mib / seconds
    out["consume_cpu"] = cpu / (8 * gib)
    return out


# --- transactions ---------------------------------------------------------------------------------


def txn_producer(index: int, bootstrap: str, txns: int, messages: Any, go: Any) -> None:
    """One transactional producer on its own 3-partition topic: `txns` transactions after `go`."""
    from confluent_kafka import Producer

    topic = f"txn-{index}"
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"bench-txn-{index}",
                         "linger.ms": 0, "acks": "all"})  # fmt: skip
    producer.init_transactions(60)
    payload = os.urandom(1024)
    producer.begin_transaction()
    producer.produce(topic, payload, partition=0)
    producer.commit_transaction(60)  # warm: partitions added, coordinator found
    messages.put(("ready", index))
    go.wait()
    for _ in range(txns):
        producer.begin_transaction()
        for p in range(3):
            producer.produce(topic, payload, partition=p)
        producer.commit_transaction(60)
    messages.put(("done", index, time.monotonic()))


def transactions(bootstrap: str, txns: int, producers: int = 8) -> float:
    """Commits per second of `producers` transactional producers together."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(f"txn-{i}", 3, 1) for i in range(producers)]).values():
        future.result(60)
    ctx = multiprocessing.get_context("spawn")
    messages, go = ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=txn_producer, args=(i, bootstrap, txns, messages, go)) for i in range(producers)
    ]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            kind, *_rest = messages.get(timeout=180)
            assert kind == "ready"
        t0 = time.monotonic()
        go.set()
        ends = [messages.get(timeout=600)[2] for _ in procs]
        return producers * txns / (max(ends) - t0)
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.terminate()


# --- coordinator figures --------------------------------------------------------------------------


async def find_coordinators(port: int, groups: list[str], timeout: float = 120.0) -> None:
    """FindCoordinator v4 for `groups` until every key has one: Kafka creates `__consumer_offsets` on the
    first FindCoordinator and answers a group request sent before with COORDINATOR_NOT_AVAILABLE."""
    connection = await coordinator.Connection.open(port)
    deadline = time.monotonic() + timeout
    try:
        while True:
            request = build_request(10, 4, key_type=0, coordinator_keys=groups)
            response = await connection.call(request, RESPONSES[10], 4)
            if all(c.error_code == 0 for c in response.coordinators):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no coordinator for {groups[:3]}...")
            await asyncio.sleep(0.1)
    finally:
        connection.close()


def heartbeat_rate(
    bootstrap: str, seconds: float, groups: int = 100, members: int = 10, window: int = 16
) -> float:
    """Classic Heartbeat v4 per second: `groups` groups of `members` formed at once, then one connection
    per group keeping `window` heartbeats of its members in flight; every answer must be error 0."""
    port = port_of(bootstrap)

    async def run() -> float:
        await find_coordinators(port, [f"hb-{g}" for g in range(groups)])
        formed = await asyncio.wait_for(
            asyncio.gather(*(coordinator.form(port, f"hb-{g}", members) for g in range(groups))), 600
        )
        loop = asyncio.get_running_loop()
        pipes: list[coordinator.HeartbeatPipe] = []
        for g, (_, group_members, setup) in enumerate(formed):
            for c in setup:
                c.close()
            frames = [
                coordinator.frame(
                    HeartbeatRequest[4](
                        group_id=f"hb-{g}", generation_id=gen, member_id=m, group_instance_id=None
                    ),
                    1,
                )
                for m, gen in group_members.values()
            ]
            _, pipe = await loop.create_connection(
                lambda f=frames: coordinator.HeartbeatPipe(f, window), "127.0.0.1", port
            )
            pipes.append(pipe)
        await asyncio.sleep(1.0)  # warm-up
        before = sum(p.responses for p in pipes)
        t0 = time.perf_counter()
        await asyncio.sleep(seconds)
        count = sum(p.responses for p in pipes) - before
        elapsed = time.perf_counter() - t0
        for p in pipes:
            assert p.transport is not None
            p.transport.close()
        errors = sum(p.errors for p in pipes)
        if errors:
            raise RuntimeError(f"{errors} heartbeats failed")
        return count / elapsed

    return asyncio.run(run())


def formations(bootstrap: str) -> dict[str, float]:
    port = port_of(bootstrap)

    async def both() -> dict[str, float]:
        await find_coordinators(port, ["formation-classic", "formation-848"])
        classic = await asyncio.wait_for(coordinator.form(port, "formation-classic", 50), 300)
        for c in classic[2]:
            c.close()
        await consumer_groups.create_topic(port, 1000)
        new = await asyncio.wait_for(consumer_groups.new_form(port, "formation-848", 1000, 1000), 600)
        for c in new[2]:
            c.close()
        return {"classic_50_ms": classic[0] * 1000, "kip848_1000_ms": new[0] * 1000}

    return asyncio.run(both())


# --- the pytest suite -----------------------------------------------------------------------------

CONFTEST = textwrap.dedent(
    """
    import sys
    import pytest

    sys.path.insert(0, {bench!r})
    from procs import KafkaPeer, running_kafka


    class Node:
        def __init__(self, bootstrap):
            self.bootstrap_servers = bootstrap


    @pytest.fixture
    def kafka_per_test():
        # A fresh Kafka node per test, as a function-scoped Testcontainers KafkaContainer gives.
        with running_kafka(KafkaPeer({{"group.initial.rebalance.delay.ms": "0"}})) as (bootstrap, _pid):
            yield Node(bootstrap)
    """
)


def suite_seconds(fixture: str, tests: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "conftest.py").write_text(CONFTEST.format(bench=str(Path(__file__).parent)))
        return fixture_overhead.run_suite(Path(directory), fixture, tests)


# --- the run --------------------------------------------------------------------------------------

Measure = Callable[[str, BrokerCommand, argparse.Namespace], dict[str, float]]


def measure_start(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    starts, jvm, rss = [], [], []
    for _ in range(args.starts):
        if isinstance(command, KafkaPeer):
            total, alone, idle = start_kafka(command)
            jvm.append(alone)
        else:
            total, idle = start_kafkito(command, args.env)
        starts.append(total)
        rss.append(idle)
    out = {"start_ms": statistics.median(starts) * 1000, "idle_rss_mb": statistics.median(rss)}
    if jvm:
        out["start_jvm_only_ms"] = statistics.median(jvm) * 1000
    return out


def measure_rss(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, pid):
        first_metadata(port_of(bootstrap), time.perf_counter())
        time.sleep(1.0)
        idle = rss_mb(pid)
        return {"idle_rss_mb": idle, "loaded_rss_mb": loaded_rss(bootstrap, pid)}


def measure_data(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, pid):
        return data_path(bootstrap, pid, args.mb, args.warm_mb)


def measure_latency(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, pid):
        r = latency.measure(bootstrap, pid, args.latency_records, 100, 1024, 500)
        return {"latency_p50_ms": r.p50, "latency_p99_ms": r.p99}


def measure_heartbeats(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, _pid):
        return {"heartbeats_per_s": heartbeat_rate(bootstrap, args.seconds)}


def measure_formation(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, _pid):
        return formations(bootstrap)


def measure_transactions(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    with running(command, args.env) as (bootstrap, _pid):
        return {"txn_commits_per_s": transactions(bootstrap, args.txns)}


def measure_share(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    @contextmanager
    def broker() -> Iterator[tuple[str, int]]:
        with running(command, args.env) as started:
            yield started

    r = share_fetch.measure_on(broker(), 4, args.share_records, 100, 100)
    if r["delivered"] < args.share_records:
        raise RuntimeError(f"{r['delivered']} of {args.share_records} records delivered")
    # The share-partition start offset once every consumer closed: records acknowledged and done.
    return {"share_records_per_s": r["rate"], "share_acknowledged": r["acknowledged"]}


def measure_suite(name: str, command: BrokerCommand, args: argparse.Namespace) -> dict[str, float]:
    fixture = "kafka_per_test" if isinstance(command, KafkaPeer) else "kafkito"
    return {"suite_s": suite_seconds(fixture, args.suite_tests)}


FIGURES: dict[str, Measure] = {
    "start": measure_start,
    "rss": measure_rss,
    "data": measure_data,
    "latency": measure_latency,
    "heartbeats": measure_heartbeats,
    "formation": measure_formation,
    "transactions": measure_transactions,
    "share": measure_share,
    "suite": measure_suite,
}

# (key, label, goal as (sense, factor)): sense "le" means kafkito/Kafka must be <= factor.
ROWS: list[tuple[str, str, str, float]] = [
    ("start_ms", "cold start to the first answered Metadata (ms)", "le", 0.05),
    ("idle_rss_mb", "idle RSS (MB)", "le", 0.1),
    ("loaded_rss_mb", "RSS with 1,000 topics and 10 groups (MB)", "le", 0.2),
    ("produce_none_mbs", "produce, 8 producers, 1 KiB, acks=all, uncompressed (MB/s)", "ge", 1.0),
    ("produce_none_cpu", "  broker CPU per GiB produced, uncompressed (s)", "le", 1.0),
    ("produce_lz4_mbs", "produce, the same, lz4 (MB/s of records)", "ge", 1.0),
    ("produce_lz4_cpu", "  broker CPU per GiB produced, lz4 (s)", "le", 1.0),
    ("consume_mbs", "consume, 8 consumers, default fetch sizes (MB/s)", "ge", 1.0),
    ("consume_cpu", "  broker CPU per GiB consumed (s)", "le", 1.0),
    ("latency_p50_ms", "end-to-end latency, one record at a time, acks=all: p50 (ms)", "le", 1.0),
    ("latency_p99_ms", "  p99 (ms)", "le", 1.0),
    ("heartbeats_per_s", "classic heartbeats per second (100 groups x 16 in flight)", "ge", 1.0),
    ("classic_50_ms", "a classic group of 50 members to Stable (ms)", "le", 1.0),
    ("kip848_1000_ms", "a KIP-848 group of 1,000 members to a stable assignment (ms)", "le", 1.0),
    ("txn_commits_per_s", "transactions: commits per second, 8 producers, 3 partitions each", "ge", 1.0),
    ("share_records_per_s", "share groups: records/s delivered and acknowledged, 4 consumers, 1 partition",
     "ge", 1.0),
    ("suite_s", "50 tests, a fresh broker per test (pytest): the whole suite (s)", "le", 0.05),
]  # fmt: skip


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each figure (default 3)")
    parser.add_argument("--starts", type=int, default=5, help="starts per run for the start figure")
    parser.add_argument("--mb", type=int, default=64, help="MiB per produce phase (default 64)")
    parser.add_argument("--warm-mb", type=int, default=16, help="MiB per untimed warm-up phase (default 16)")
    parser.add_argument("--latency-records", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0, help="heartbeat measuring window")
    parser.add_argument("--txns", type=int, default=300, help="transactions per producer (default 300)")
    parser.add_argument("--share-records", type=int, default=100_000)
    parser.add_argument("--suite-tests", type=int, default=50)
    parser.add_argument("--only-figures", default=",".join(FIGURES), help="comma-separated figure groups")
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kafkito of DIR/.venv")
    parser.add_argument("--json", metavar="FILE", help="write every run's figures to FILE")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    cache = tempfile.TemporaryDirectory()
    args.env = {**os.environ, "PYTHONPYCACHEPREFIX": cache.name}
    args.env.pop("PYTHONDONTWRITEBYTECODE", None)
    brokers: list[tuple[str, BrokerCommand]] = [(KAFKITO, kafkito_broker())]
    if args.baseline:
        brokers.append((f"kafkito serve ({args.baseline})", kafkito_broker(args.baseline)))
    brokers.append((KAFKA, kafka_broker()))
    for _name, command in brokers:  # untimed: fills kafkito's bytecode cache, warms the page cache
        if not isinstance(command, KafkaPeer):
            start_kafkito(command, args.env)
    args.env["PYTHONDONTWRITEBYTECODE"] = "1"
    chosen = [f for f in args.only_figures.split(",") if f]
    results: dict[str, dict[str, list[float]]] = {name: {} for name, _ in brokers}
    failures: list[str] = []
    for figure in chosen:
        runs = 1 if figure == "suite" else args.runs
        for run in range(runs):
            order = brokers if run % 2 == 0 else list(reversed(brokers))
            for name, command in order:
                t0 = time.monotonic()
                try:
                    got = FIGURES[figure](name, command, args)
                except Exception as exc:  # reported; the other figures go on
                    failures.append(f"{figure} run {run + 1} {name}: {type(exc).__name__}: {exc}")
                    print(f"FAILED {failures[-1]}", file=sys.stderr, flush=True)
                    continue
                for key, value in got.items():
                    results[name].setdefault(key, []).append(value)
                shown = ", ".join(f"{k}={v:.3g}" for k, v in got.items())
                print(f"{figure} run {run + 1} {name}: {shown} ({time.monotonic() - t0:.0f} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "failures": failures}, indent=1))
    report(brokers, results, failures, args)


def report(
    brokers: list[tuple[str, BrokerCommand]],
    results: dict[str, dict[str, list[float]]],
    failures: list[str],
    args: argparse.Namespace,
) -> None:
    names = [name for name, _ in brokers]
    others = [n for n in names if n not in (KAFKITO, KAFKA)]
    print(f"| figure | kafkito | {KAFKA} | ratio | goal | met |" + "".join(f" {n} |" for n in others))
    print("|---|---|---|---|---|---|" + "---|" * len(others))

    def median(name: str, key: str) -> float | None:
        values = results[name].get(key)
        return statistics.median(values) if values else None

    for key, label, sense, goal in ROWS:
        ours, theirs = median(KAFKITO, key), median(KAFKA, key)
        if ours is None and theirs is None:
            continue
        ratio = ours / theirs if ours is not None and theirs else None
        met = (
            "-" if ratio is None else ("yes" if (ratio <= goal if sense == "le" else ratio >= goal) else "no")
        )
        sign = "≤" if sense == "le" else "≥"
        cells = [_fmt(ours), _fmt(theirs), "-" if ratio is None else f"{ratio:.2f}x", f"{sign} {goal}x", met]
        extra = "".join(f" {_fmt(median(n, key))} |" for n in others)
        print(f"| {label} | " + " | ".join(cells) + " |" + extra)
    jvm = median(KAFKA, "start_jvm_only_ms")
    if jvm is not None:
        print(f"\nKafka's JVM alone (storage already formatted), spawn to first Metadata: {jvm:.0f} ms.")
    for failure in failures:
        print(f"- failed: {failure}")


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


if __name__ == "__main__":
    main()
