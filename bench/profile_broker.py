"""Where a `kafkito serve` spends its CPU under one of the comparison's loads (bench/vs_kafka.py),
sampled by py-spy (`pip install py-spy`; it reads the process from outside, as root).

Run: .venv/bin/python bench/profile_broker.py produce|produce-lz4|consume|heartbeats|latency|txn|start
                                              [--mb 64] [--rate 250] [--top 25] [--raw FILE]

The broker runs as in the comparison; py-spy samples it (with native frames, so time in C extensions and
libc shows as such) for the whole load. Printed: the share of samples by innermost Python function
("self"), by any function on the stack ("total"), and by kafkito module. `start` samples a start to
the first answered Metadata instead (py-spy launches the broker).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import vs_kafka  # bench/vs_kafka.py
from procs import free_port, running


def py_spy() -> str:
    exe = shutil.which("py-spy") or shutil.which("py-spy", path="/tmp/pyspy/bin")
    if exe is None:
        raise SystemExit("py-spy not found: pip install py-spy")
    return exe


def load(kind: str, bootstrap: str, pid: int, mb: int) -> None:
    if kind in ("produce", "produce-lz4", "consume"):
        import clients
        from confluent_kafka.admin import AdminClient, NewTopic

        records = mb * (1 << 20) // clients.RECORD
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic(t, 4, 1) for t in ("bench", clients.WARMUP)]).values():
            future.result(60)
        phase = clients.Phase(bootstrap, "bench")
        phase.add_producers(8, records, "lz4" if kind == "produce-lz4" else "none")
        phase.run(pid, records, 4)
        if kind == "consume":
            read = clients.Phase(bootstrap, "bench")
            read.add_consumers(8, 1, subscribe=False)
            read.run(pid, records, 4)
    elif kind == "heartbeats":
        vs_kafka.heartbeat_rate(bootstrap, 10.0)
    elif kind == "latency":
        import latency

        latency.measure(bootstrap, pid, 2000, 100, 1024, 500)
    elif kind == "txn":
        vs_kafka.transactions(bootstrap, 300)
    else:
        raise SystemExit(f"unknown load {kind}")


IDLE = ("epoll_pwait", "epoll_wait", "_queue_SimpleQueue_get", "PyThread_acquire_lock_timed")


def summarise(raw: Path, top: int) -> None:
    """py-spy's raw (collapsed) stacks: `frame;frame;... count` per line, outermost first. Samples of a
    thread waiting (the event loop in epoll, an idle executor thread) are left out: what is left is
    the broker's busy time, split by innermost frame ("self"), by any frame on the stack ("total"),
    and by the innermost Python module (a native frame below it, e.g. a syscall, counts to it)."""
    self_counts: collections.Counter[str] = collections.Counter()
    total_counts: collections.Counter[str] = collections.Counter()
    modules: collections.Counter[str] = collections.Counter()
    samples = idle = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = [f for f in stack.split(";") if f]
        if not frames:
            continue
        if any(word in f for f in frames[-4:] for word in IDLE):
            idle += n
            continue
        samples += n
        self_counts[frames[-1]] += n
        for f in set(frames):
            total_counts[f] += n
        python = [f for f in frames if ".py:" in f]
        modules[_module(python[-1]) if python else "(native only)"] += n
    print(f"{samples} busy samples ({idle} idle left out)")
    for title, counter in (
        ("self", self_counts),
        ("total", total_counts),
        ("innermost Python module", modules),
    ):
        print(f"\n{title}:")
        for frame, n in counter.most_common(top):
            print(f"{100 * n / max(samples, 1):5.1f}%  {frame}")


def _module(frame: str) -> str:
    # "function (path/to/file.py:123)"
    inside = frame.rpartition("(")[2].rstrip(")")
    return inside.rpartition(":")[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("load")
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--rate", type=int, default=250)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--raw", help="keep py-spy's collapsed stacks in this file")
    args = parser.parse_args()
    raw = Path(args.raw or tempfile.mktemp(suffix=".txt"))
    spy = [py_spy(), "record", "--native", "--rate", str(args.rate), "--format", "raw", "-o", str(raw)]
    if args.load == "start":
        port = free_port()
        with tempfile.TemporaryDirectory() as data:
            serve = vs_kafka.kafkito_broker()(port, data)
            proc = subprocess.Popen(
                [*spy, "--", *serve], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            vs_kafka.first_metadata(port, time.perf_counter())
            time.sleep(0.2)
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(60)
    else:
        with running(vs_kafka.kafkito_broker()) as (bootstrap, pid):
            recorder = subprocess.Popen(
                [*spy, "--pid", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                load(args.load, bootstrap, pid, args.mb)
            finally:
                recorder.send_signal(signal.SIGINT)
                recorder.wait(60)
    summarise(raw, args.top)


if __name__ == "__main__":
    sys.exit(main())
