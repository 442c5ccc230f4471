"""What the web console costs the broker: CPU while someone watches a busy group, and start-up.

Run: .venv/bin/python bench/console.py [--seconds 20] [--starts 5]

1. CPU: a `kafkito serve --http` child carries a busy group (a producer sending ~1000 records/s,
   three kafka-python consumers in one group committing every second). The broker's CPU time
   (utime + stime from /proc) per wall second is measured three times, each `--seconds` long:
   nobody watching; one watcher polling the group page as the browser does (its fragment every
   2 s, plus the overview); and a stress watcher fetching the group page, its timeline and the
   JSON API ten times a second. The difference to the first is the console's cost.
2. Start-up: spawn to the Kafka port accepting, without and with `--http`, and with it to the
   console answering /api/overview; `--starts` runs each, alternated; medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.net import free_port, wait_for_port

GROUP, TOPIC = "busy", "busy-events"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spawn(data: Path, port: int, http_port: int | None) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "kafkito", "serve", "--port", str(port), "--data-dir", str(data),
           "--log-level", "warning", "--set", "group.initial.rebalance.delay.ms=0"]  # fmt: skip
    if http_port is not None:
        cmd += ["--http", f"127.0.0.1:{http_port}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return bytes(response.read())


class Load:
    """A producer and three committing consumers of one group, in threads, until stopped."""

    def __init__(self, bootstrap: str) -> None:
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._produce, args=(bootstrap,), daemon=True)]
        self.threads += [
            threading.Thread(target=self._consume, args=(bootstrap, i), daemon=True) for i in range(3)
        ]
        for thread in self.threads:
            thread.start()

    def _produce(self, bootstrap: str) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        while not self.stopping.is_set():
            for _ in range(100):
                producer.send(TOPIC, b"event")
            time.sleep(0.1)
        producer.close(5)

    def _consume(self, bootstrap: str, index: int) -> None:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(
            TOPIC, bootstrap_servers=bootstrap, group_id=GROUP, client_id=f"busy-{index}",
            auto_commit_interval_ms=1000,
        )  # fmt: skip
        while not self.stopping.is_set():
            consumer.poll(timeout_ms=200)
        consumer.close()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)


def watch(base: str, interval_s: float, paths: list[str], stopping: threading.Event) -> None:
    while not stopping.is_set():
        for path in paths:
            get(base + path)
        stopping.wait(interval_s)


def cpu_per_second(pid: int, seconds: float, watcher: Callable[[threading.Event], None] | None) -> float:
    stopping = threading.Event()
    thread = threading.Thread(target=watcher, args=(stopping,), daemon=True) if watcher else None
    if thread is not None:
        thread.start()
    wall0, cpu0 = time.monotonic(), cpu_seconds(pid)
    time.sleep(seconds)
    cpu1, wall1 = cpu_seconds(pid), time.monotonic()
    stopping.set()
    if thread is not None:
        thread.join(30)
    return (cpu1 - cpu0) / (wall1 - wall0)


def cpu_bench(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        port, http_port = free_port(), free_port()
        proc = spawn(Path(tmp) / "data", port, http_port)
        base = f"http://127.0.0.1:{http_port}"
        try:
            wait_for_port("127.0.0.1", http_port, 30)
            load = Load(f"127.0.0.1:{port}")
            time.sleep(5)  # the group forms, the load settles
            page = [f"/console/groups/{GROUP}?fragment=1", "/api/overview"]
            stress = [f"/console/groups/{GROUP}?fragment=1", f"/console/groups/{GROUP}/timeline?fragment=1",
                      f"/api/groups/{GROUP}", f"/api/groups/{GROUP}/timeline", "/api/overview"]  # fmt: skip
            group = get(f"{base}/api/groups/{GROUP}").decode()
            idle = cpu_per_second(proc.pid, seconds, None)
            browser = cpu_per_second(proc.pid, seconds, lambda s: watch(base, 2.0, page, s))
            heavy = cpu_per_second(proc.pid, seconds, lambda s: watch(base, 0.1, stress, s))
            load.stop()
        finally:
            stop(proc)
    print(f"busy group: {group[:160]}...")
    print(f"broker CPU, busy group, nobody watching:        {idle * 1000:6.1f} ms/s")
    print(f"  + one watcher as the browser polls (2 s):     {browser * 1000:6.1f} ms/s "
          f"(+{(browser - idle) * 1000:.1f})")  # fmt: skip
    print(f"  + a watcher fetching 5 pages/APIs 10x a second: {heavy * 1000:6.1f} ms/s "
          f"(+{(heavy - idle) * 1000:.1f})")  # fmt: skip


def start_time(http: bool) -> tuple[float, float | None]:
    """Seconds from spawn to the Kafka port accepting, and (with `http`) to /api/overview answering."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        http_port = free_port() if http else None
        began = time.perf_counter()
        proc = spawn(Path(tmp) / "data", port, http_port)
        try:
            wait_accepting(port)
            kafka = time.perf_counter() - began
            if http_port is None:
                return kafka, None
            deadline = time.monotonic() + 30
            while True:
                try:
                    get(f"http://127.0.0.1:{http_port}/api/overview")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.002)
            return kafka, time.perf_counter() - began
        finally:
            stop(proc)


def wait_accepting(port: int, timeout: float = 30) -> None:
    """Poll every 2 ms (start-up is measured to a few ms)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {port}") from None
            time.sleep(0.002)


def startup_bench(starts: int) -> None:
    without: list[float] = []
    kafka: list[float] = []
    console: list[float] = []
    for _ in range(starts):
        without.append(start_time(False)[0])
        with_kafka, with_console = start_time(True)
        kafka.append(with_kafka)
        console.append(with_console or 0.0)
    rows = (
        ("without --http: Kafka port accepting", without),
        ("with --http: Kafka port accepting", kafka),
        ("with --http: console answering /api/overview", console),
    )
    for label, times in rows:
        runs = ", ".join(f"{t * 1000:.0f}" for t in times)
        print(f"start-up, {label}: median {statistics.median(times) * 1000:.0f} ms ({runs})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    startup_bench(args.starts)
    cpu_bench(args.seconds)


if __name__ == "__main__":
    main()
