"""Topic creation cost as topics accumulate, and what another client sees meanwhile.

Run: .venv/bin/python bench/topics.py [--topics 10000] [--batch 100] [--baseline DIR [--baseline-topics N]]

One client auto-creates topics through Metadata requests of `--batch` new names each (as any client
can, auto-creation being on by default) until `--topics` exist. A second client sends a Metadata
request for one topic every 10 ms throughout. Reported: the time of the first and the last batches,
and the probe's latency while each of them ran. Flat creation cost means the last batches cost what
the first ones did.

`--baseline DIR` runs the same load against another checkout's broker (`python -m kafkito` with DIR
on PYTHONPATH, e.g. a `git worktree` of an older commit) after this tree's.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.parser import KafkaProtocol
from procs import free_port, wait_for_port  # bench/procs.py (scripts run with bench/ on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PROBE_EVERY_S = 0.01
EDGE = 5  # batches averaged at each end


class Client:
    """One blocking Kafka connection that sends a request and waits for its response."""

    def __init__(self, port: int, client_id: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=600)
        self.proto = KafkaProtocol(client_id=client_id)

    def call(self, request: Any) -> Any:
        self.proto.send_request(request)
        self.sock.sendall(self.proto.send_bytes())
        while True:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            for _, response in self.proto.receive_bytes(chunk):
                return response

    def close(self) -> None:
        self.sock.close()


@dataclass
class Run:
    batches: list[tuple[float, float]] = field(default_factory=list)  # (start, end) perf_counter
    probes: list[tuple[float, float]] = field(default_factory=list)  # (start, latency)

    def batch_s(self, which: slice) -> float:
        return statistics.mean(end - start for start, end in self.batches[which])

    def probe_ms(self, which: slice) -> tuple[float, float]:
        """Median and max probe latency while the chosen batches ran."""
        spans = self.batches[which]
        lat = [lat for t, lat in self.probes if any(s <= t <= e for s, e in spans)] or [float("nan")]
        return statistics.median(lat) * 1e3, max(lat) * 1e3


def probe(port: int, stop: threading.Event, run: Run) -> None:
    client = Client(port, "probe")
    request = MetadataRequest[4](topics=["probe"], allow_auto_topic_creation=False)
    try:
        while not stop.is_set():
            t0 = time.perf_counter()
            client.call(request)
            run.probes.append((t0, time.perf_counter() - t0))
            time.sleep(PROBE_EVERY_S)
    finally:
        client.close()


def load(port: int, topics: int, batch: int) -> Run:
    run = Run()
    creator = Client(port, "creator")
    creator.call(MetadataRequest[4](topics=["probe"], allow_auto_topic_creation=True))
    stop = threading.Event()
    prober = threading.Thread(target=probe, args=(port, stop, run), daemon=True)
    prober.start()
    try:
        for first in range(0, topics, batch):
            names = [f"bench-{i:06d}" for i in range(first, min(first + batch, topics))]
            t0 = time.perf_counter()
            response = creator.call(MetadataRequest[4](topics=names, allow_auto_topic_creation=True))
            run.batches.append((t0, time.perf_counter()))
            failed = [t for t in response.topics if t[0] != 0]
            if failed:
                raise RuntimeError(f"creation failed: {failed[:3]}")
    finally:
        stop.set()
        prober.join()
        creator.close()
    return run


def serve(checkout: Path, port: int, data: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, "-m", "kafkito", "serve", "--port", str(port), "--data-dir", data]
    cmd += ["--log-level", "warning", "--set", "offsets.topic.num.partitions=1"]
    return subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(checkout: Path, topics: int, batch: int) -> tuple[Run, float]:
    """The run, and seconds from SIGTERM to exit once it ends."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = serve(checkout, port, data)
        try:
            wait_for_port(port)
            run = load(port, topics, batch)
            t0 = time.perf_counter()
            proc.terminate()
            proc.wait(timeout=120)
            return run, time.perf_counter() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def report(name: str, run: Run, stop_s: float) -> None:
    head, tail = slice(0, EDGE), slice(-EDGE, None)
    first_med, first_max = run.probe_ms(head)
    last_med, last_max = run.probe_ms(tail)
    whole_med, whole_max = run.probe_ms(slice(None))
    first_ms, last_ms = run.batch_s(head) * 1e3, run.batch_s(tail) * 1e3
    print(f"{name}")
    print(
        f"  batch time, mean of the first {EDGE}: {first_ms:8.1f} ms   of the last {EDGE}: {last_ms:8.1f} ms"
    )
    print(f"  probe Metadata while first batches: median {first_med:6.2f} ms, max {first_max:7.1f} ms")
    print(f"  probe Metadata while last batches:  median {last_med:6.2f} ms, max {last_max:7.1f} ms")
    print(f"  probe Metadata over the whole run:  median {whole_med:6.2f} ms, max {whole_max:7.1f} ms")
    total = run.batches[-1][1] - run.batches[0][0]
    print(f"  {len(run.batches)} batches in {total:.1f} s; SIGTERM to exit afterwards {stop_s * 1e3:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--baseline", metavar="DIR", help="another checkout to run the same load against")
    parser.add_argument("--baseline-topics", type=int, help="fewer topics for a slow baseline")
    args = parser.parse_args()
    print(f"{args.topics} topics in Metadata auto-create batches of {args.batch}, 1 partition each")
    run, stop_s = measure(ROOT, args.topics, args.batch)
    report("this tree", run, stop_s)
    if args.baseline:
        topics = args.baseline_topics or args.topics
        run, stop_s = measure(Path(args.baseline).resolve(), topics, args.batch)
        report(f"baseline {args.baseline} ({topics} topics)", run, stop_s)


if __name__ == "__main__":
    main()
