"""Cold start (process spawn -> first Metadata response) and idle RSS of `kafkito serve`, beside Tansu.

Run: .venv/bin/python bench/startup.py [--runs 10] [--baseline OTHER_CHECKOUT] [--restart]

`--baseline DIR` also starts the broker of another checkout, installed in `DIR/.venv`, interleaved.
`--restart` times a restart instead of a first start: each data directory is first served once, asked
for a group's coordinator (which makes `__consumer_offsets`) and stopped cleanly, untimed.

The broker reads its bytecode from a cache of the bench's own (PYTHONPYCACHEPREFIX), filled by one
untimed start, as an installed broker does (pip compiles at install time). Without it, a checkout run
with PYTHONDONTWRITEBYTECODE=1 compiles every kafkito module at every start (~50 ms more).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from procs import (  # bench/procs.py (scripts run with bench/ on sys.path)
    TANSU,
    free_port,
    kafkito_executable,
    tansu_command,
)

# Metadata v0 request for all topics, correlation id 1, client id "bench".
METADATA_V0 = struct.pack(">hhih", 3, 0, 1, 5) + b"bench" + struct.pack(">i", 0)
FRAME = struct.pack(">i", len(METADATA_V0)) + METADATA_V0
# FindCoordinator v0 for group "bench", correlation id 2: a broker creates `__consumer_offsets` by then.
FIND_COORDINATOR_V0 = struct.pack(">hhih", 10, 0, 2, 5) + b"bench" + struct.pack(">h", 5) + b"bench"


def first_metadata(port: int, t0: float, timeout: float = 30.0) -> float:
    """Seconds from t0 until a Metadata response arrives on 127.0.0.1:port."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(FRAME)
                size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
                s.recv(size, socket.MSG_WAITALL)
                return time.perf_counter() - t0
        except (ConnectionRefusedError, ConnectionResetError, struct.error):
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"no Metadata answer on port {port}") from None
            time.sleep(0.001)


def ask(port: int, body: bytes) -> None:
    """Send one request to 127.0.0.1:port and read its response."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
        s.recv(size, socket.MSG_WAITALL)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


Variant = tuple[Callable[[int, str], list[str]], dict[str, str] | None]  # command for (port, data dir), env


def serve_once(cmd_for_port: Callable[[int, str], list[str]], env: dict[str, str] | None, data: str) -> None:
    """Start the broker on `data`, have it make `__consumer_offsets`, stop it cleanly (untimed)."""
    port = free_port()
    cmd = cmd_for_port(port, data)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        first_metadata(port, time.perf_counter())
        ask(port, FIND_COORDINATOR_V0)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def measure(variants: list[Variant], runs: int, restart: bool = False) -> list[tuple[list[float], float]]:
    """Start each variant `runs` times, in turn (machine noise hits them alike); idle RSS after the last.

    With `restart`, each timed start is the second one on its data directory."""
    starts: list[list[float]] = [[] for _ in variants]
    rss = [float("nan")] * len(variants)
    for i in range(runs):
        for j, (cmd_for_port, env) in enumerate(variants):
            port = free_port()
            with tempfile.TemporaryDirectory() as data:
                if restart:
                    serve_once(cmd_for_port, env, data)
                t0 = time.perf_counter()
                cmd = cmd_for_port(port, data)
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                try:
                    starts[j].append(first_metadata(port, t0))
                    if i == runs - 1:
                        time.sleep(1.0)
                        rss[j] = rss_mb(proc.pid)
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
    return list(zip(starts, rss, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--baseline", metavar="DIR", help="also start the broker of another kafkito checkout, interleaved"
    )
    parser.add_argument(
        "--restart", action="store_true", help="time restarts on a data directory with __consumer_offsets"
    )
    args = parser.parse_args()

    def command(exe: str) -> Callable[[int, str], list[str]]:
        def cmd(port: int, data: str) -> list[str]:
            return [exe, "serve", "--host", "127.0.0.1", "--port", str(port),
                    "--data-dir", data, "--log-level", "warning"]  # fmt: skip

        return cmd

    with tempfile.TemporaryDirectory() as pycache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": pycache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        names = ["kafkito serve"]
        variants: list[Variant] = [(command(kafkito_executable()), env)]
        if args.baseline:
            names.append(f"kafkito serve ({args.baseline})")
            variants.append((command(kafkito_executable(args.baseline)), dict(env)))
        # Untimed: fills the bytecode cache, with a start of the kind timed (a restart imports modules
        # that a first start does not, such as `__consumer_offsets`' reader).
        measure(variants, 1, args.restart)
        for _, variant_env in variants:
            assert variant_env is not None
            variant_env["PYTHONDONTWRITEBYTECODE"] = "1"
        results = measure(variants, args.runs, args.restart)
        rows = [(name, *result) for name, result in zip(names, results, strict=True)]
    try:
        if args.restart:
            raise RuntimeError("its storage is in memory: a restart starts empty")
        tansu_command(0)  # ImportError if the peer is not installed

        def tansu_cmd(port: int, _data: str) -> list[str]:
            return tansu_command(port)

        rows.append((TANSU, *measure([(tansu_cmd, None)], args.runs)[0]))
    except Exception as exc:  # the peer is optional: the bench still reports kafkito
        print(f"tansu not measured: {exc}", file=sys.stderr)

    base = statistics.median(rows[0][1])
    start = "restart" if args.restart else "cold start"
    print(
        f"| broker | {start} to first Metadata, median of {args.runs} (ms) | min (ms) "
        "| idle RSS (MB) | start vs kafkito |"
    )
    print("|---|---|---|---|---|")
    for name, starts, rss in rows:
        med = statistics.median(starts)
        print(f"| {name} | {med * 1000:.0f} | {min(starts) * 1000:.0f} | {rss:.1f} | {med / base:.2f}x |")


if __name__ == "__main__":
    main()
