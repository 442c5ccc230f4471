"""Streams groups (KIP-1071) forming, kafkito beside Apache Kafka 4.4 (issue 31): the time for N instances
of one Kafka Streams application to form a Stable group with every task assigned, and the broker's CPU
per heartbeat once they are steady.

Run: .venv/bin/python bench/streams_groups.py [--sizes 3,10,50] [--runs 1] [--partitions 50]
                                             [--window 60] [--settle 10] [--idle 10]
                                             [--fetch-wait-ms MS] [--only kafkito|kafka]
                                             [--baseline DIR] [--json FILE]
Needs `make install-clients` (Kafka 4.4's jars and the Java driver
tests/kafka_reference/src/main/java/org/kafkito/streams/GroupFormationBench.java).

For each size N and each broker, a fresh broker (kafkito: `kafkito serve` on a temp data dir; Kafka: one
KRaft node as bench/procs.py's KafkaPeer starts it, the JVM as Kafka's scripts start it) gets an input
and an output topic of `--partitions` partitions. After `--settle` seconds, its idle CPU is read over
`--idle` seconds, then one JVM runs N `KafkaStreams` of the same word count (two subtopologies: 2 x
partitions tasks; one stream thread each, `group.protocol=streams`, Kafka Streams' defaults otherwise),
all started together.
- stable: from the first `start()` until `Admin.describeStreamsGroups` (polled every 50 ms from that
  JVM) shows the group Stable with N members and every task assigned once: the figure.
- running: until every instance is RUNNING with its active tasks adding up to every task once (the
  clients' view, beside it).
- After `--settle` seconds, a window of `--window` seconds: the broker's CPU time (/proc) over it, and
  the heartbeats the N instances sent in it (the sum of their clients' heartbeat-total metrics), also
  their fetches and their requests of every kind. CPU per heartbeat is the window's CPU over the
  heartbeats; "net" subtracts the broker's idle CPU rate first. The window's CPU is not heartbeats
  alone: each member also keeps a Fetch parked (fetch.max.wait.ms 500: two a second against a heartbeat
  every 5 s), which the fetches and requests columns count; `--fetch-wait-ms 10000` makes heartbeats
  the larger part (one fetch every 10 s).
- The driver's `trace` (printed on stderr with each run's figures, and in `--json`) lists each change
  of the described group while it formed: ms, state, members, group epoch, target assignment epoch,
  members at that epoch.
Both brokers get `group.streams.initial.rebalance.delay.ms=3000` (Kafka's default, kafkito's too) and
`group.initial.rebalance.delay.ms=0` (as the other comparisons); the members heartbeat at the broker's
`group.streams.heartbeat.interval.ms`, 5000 ms by default on both. Brokers alternate order run by run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic
from procs import (
    KAFKA,
    REPO,
    BrokerCommand,
    KafkaPeer,
    cpu_seconds,
    kafkito_command,
    kafkito_executable,
    running,
)

COMPARED = {"group.streams.initial.rebalance.delay.ms": "3000", "group.initial.rebalance.delay.ms": "0"}
KAFKITO = "kafkito serve (disk)"
APPLICATION, INPUT, OUTPUT = "bench-wordcount", "bench-lines", "bench-counts"
DRIVER = "org.kafkito.streams.GroupFormationBench"
JAR = REPO / "tests" / "kafka_reference" / "target" / "kafka-reference-1.jar"
CLASSPATH = REPO / "tests" / "kafka_reference" / "target" / "classpath.txt"
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
# The instances' JVM: the same for both brokers; the quick JIT tier and a serial collector keep its
# own CPU (which shares the machine with the broker) down.
DRIVER_JVM = ("-Xmx3g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=warn")


def brokers(only: str | None, baseline: str | None) -> list[tuple[str, BrokerCommand]]:
    extra = [arg for k, v in COMPARED.items() for arg in ("--set", f"{k}={v}")]

    def kafkito(exe: str) -> BrokerCommand:
        return lambda port, data: kafkito_command(exe, port, data, *extra)

    chosen: list[tuple[str, BrokerCommand]] = []
    if only != "kafka":
        chosen.append((KAFKITO, kafkito(kafkito_executable())))
        if baseline:
            chosen.append((f"kafkito serve ({baseline})", kafkito(kafkito_executable(baseline))))
    if only != "kafkito":
        chosen.append((KAFKA, KafkaPeer(dict(COMPARED))))
    return chosen


def create_topics(bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, partitions, 1) for t in (INPUT, OUTPUT)], operation_timeout=30)
    for future in futures.values():
        future.result(60)


class Driver:
    """The JVM of N instances (GroupFormationBench), its JSON lines read one at a time."""

    def __init__(self, bootstrap: str, n: int, args: argparse.Namespace, state: Path) -> None:
        classpath = f"{JAR}:{CLASSPATH.read_text().strip()}"
        argv = [JAVA, *DRIVER_JVM, "-cp", classpath, DRIVER, bootstrap, APPLICATION, INPUT, OUTPUT]
        argv += [str(n), str(args.partitions), str(state), str(args.timeout)]
        argv += [str(args.fetch_wait_ms)] if args.fetch_wait_ms is not None else []
        self.log = state.parent / "driver.log"
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)

    def line(self, event: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        raw = self.proc.stdout.readline()
        while raw and not raw.startswith(b"{"):  # what a library printed (RocksDB, the JVM)
            raw = self.proc.stdout.readline()
        if not raw:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the driver exited ({self.proc.wait()}) before '{event}':\n{tail}")
        got: dict[str, Any] = json.loads(raw)
        assert got["event"] == event, got
        return got

    def mark(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"mark\n")
        self.proc.stdin.flush()
        return self.line("mark")

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # the driver halts at the end of its stdin
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure(command: BrokerCommand, n: int, args: argparse.Namespace) -> dict[str, Any]:
    with running(command) as (bootstrap, pid), tempfile.TemporaryDirectory() as tmp:
        create_topics(bootstrap, args.partitions)
        time.sleep(args.settle)  # past the broker's start (a JVM compiling its start-up paths)
        cpu0 = cpu_seconds(pid)
        time.sleep(args.idle)
        idle_rate = (cpu_seconds(pid) - cpu0) / args.idle
        (Path(tmp) / "state").mkdir()
        driver = Driver(bootstrap, n, args, Path(tmp) / "state")
        try:
            formed = driver.line("formed")
            result: dict[str, Any] = {"n": n, "idle_cpu_ms_per_s": idle_rate * 1000, **formed}
            if formed["stable_ms"] < 0:
                return result  # no steady window without a formed group
            time.sleep(args.settle)
            first, cpu_first, t_first = driver.mark(), cpu_seconds(pid), time.monotonic()
            time.sleep(args.window)
            last, cpu_last, t_last = driver.mark(), cpu_seconds(pid), time.monotonic()
        finally:
            driver.stop()
    seconds, cpu = t_last - t_first, cpu_last - cpu_first
    heartbeats = last["heartbeats"] - first["heartbeats"]
    return result | {
        "window_s": seconds,
        "steady": [first["state"], last["state"], first["members"], last["members"]],
        "heartbeats": heartbeats,
        "fetches": last["fetches"] - first["fetches"],
        "requests": last["requests"] - first["requests"],
        "cpu_s": cpu,
        "cpu_us_per_heartbeat": cpu / heartbeats * 1e6 if heartbeats else float("nan"),
        "net_cpu_us_per_heartbeat": (cpu - idle_rate * seconds) / heartbeats * 1e6
        if heartbeats
        else float("nan"),
        "cpu_ms_per_member_s": cpu / (n * seconds) * 1000,
    }


COLUMNS = (
    ("stable s", "stable_ms", 1e-3, "{:.2f}"),
    ("running s", "running_ms", 1e-3, "{:.2f}"),
    ("heartbeats", "heartbeats", 1, "{:.0f}"),
    ("fetches", "fetches", 1, "{:.0f}"),
    ("requests", "requests", 1, "{:.0f}"),
    ("broker CPU s", "cpu_s", 1, "{:.2f}"),
    ("idle ms/s", "idle_cpu_ms_per_s", 1, "{:.1f}"),
    ("µs/heartbeat", "cpu_us_per_heartbeat", 1, "{:.0f}"),
    ("net µs/heartbeat", "net_cpu_us_per_heartbeat", 1, "{:.0f}"),
    ("ms/member/s", "cpu_ms_per_member_s", 1, "{:.2f}"),
)


def table(results: dict[tuple[str, int], list[dict[str, Any]]]) -> str:
    lines = [
        "| broker | N | " + " | ".join(c[0] for c in COLUMNS) + " |",
        "|---|---" + "|---" * len(COLUMNS) + "|",
    ]
    for (name, n), runs in results.items():
        cells = []
        for _, key, scale, fmt in COLUMNS:
            values = [r[key] for r in runs if key in r and r[key] is not None and r[key] != -1]
            cells.append(fmt.format(statistics.median(values) * scale) if values else "-")
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="3,10,50", help="instances per group, comma-separated")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--partitions", type=int, default=50, help="partitions of the input topic")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of the steady CPU window")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds from formed to the window")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of the broker's idle CPU reading")
    parser.add_argument("--timeout", type=int, default=300, help="seconds the driver waits for a group")
    parser.add_argument(
        "--fetch-wait-ms", type=int, help="the instances' main consumer fetch.max.wait.ms (default 500)"
    )
    parser.add_argument("--only", choices=["kafkito", "kafka"], help="measure one broker only")
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kafkito of DIR/.venv")
    parser.add_argument("--json", metavar="FILE", help="write every run's figures there")
    args = parser.parse_args()
    if not JAR.exists() or not CLASSPATH.exists():
        raise SystemExit(f"{JAR} or {CLASSPATH} is missing: run `make install-clients`")
    chosen = brokers(args.only, args.baseline)
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[tuple[str, int], list[dict[str, Any]]] = {
        (name, n): [] for n in sizes for name, _ in chosen
    }
    for run in range(args.runs):
        for i, n in enumerate(sizes):
            order = chosen if (run + i) % 2 == 0 else chosen[::-1]
            for name, command in order:
                try:
                    got = measure(command, n, args)
                except Exception as exc:  # a broker or size that does not fit the machine: said, not fatal
                    got = {"n": n, "error": f"{type(exc).__name__}: {exc}"[:2000]}
                results[(name, n)].append(got)
                print(f"run {run} {name} N={n}: {json.dumps(got)}", file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        serial = [{"broker": name, "runs": runs} for (name, _), runs in results.items()]
        Path(args.json).write_text(json.dumps(serial, indent=1))


if __name__ == "__main__":
    main()
