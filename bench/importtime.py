"""What `kafkito serve` imports before its first Metadata answer, by `python -X importtime`.

Run: .venv/bin/python bench/importtime.py [--runs 7] [--restart] [--checkout DIR]

Each run spawns `python -X importtime <kafkito> serve` on a fresh data directory (with `--restart`: one
a first, untimed start left holding `__consumer_offsets`), reads its import log once the first Metadata
answer arrives, and stops it. Bytecode comes from a cache of the bench's own, filled by one untimed start.
Prints the minimum self time of each module over the runs, summed for kafkito's own modules (by package)
and for the others (by top-level package), and the top modules. `--checkout DIR` measures another
checkout's `DIR/.venv` (its own modules may be `broker.*` rather than `kafkito.broker.*`).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import tempfile
import time
from pathlib import Path

from procs import free_port, kafkito_executable
from startup import FIND_COORDINATOR_V0, ask, first_metadata

OWN = ("kafkito", "broker", "protocol", "purgatory")


def one_start(exe: str, env: dict[str, str], restart: bool) -> dict[str, int]:
    """Self time (µs) of each module imported until the first Metadata answer."""
    python = str(Path(exe).parent / "python")
    with tempfile.TemporaryDirectory() as data:

        def serve(port: int, *extra: str) -> subprocess.Popen[str]:
            args = [python, *extra, exe, "serve", "--host", "127.0.0.1", "--port", str(port),
                    "--data-dir", data, "--log-level", "warning"]  # fmt: skip
            return subprocess.Popen(
                args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True
            )

        if restart:
            port = free_port()
            proc = serve(port)
            first_metadata(port, time.perf_counter())
            ask(port, FIND_COORDINATOR_V0)
            proc.terminate()
            proc.communicate()
        port = free_port()
        proc = serve(port, "-X", "importtime")
        first_metadata(port, time.perf_counter())
        proc.terminate()
        err = proc.communicate()[1]
    times: dict[str, int] = {}
    for line in err.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            head, _cumulative, name = line.split("|")
            times[name.strip()] = int(head.split(":")[1])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--restart", action="store_true")
    parser.add_argument("--checkout", metavar="DIR", help="another checkout, installed in DIR/.venv")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    exe = kafkito_executable(args.checkout)
    best: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as pycache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": pycache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for run in range(args.runs + 1):
            times = one_start(exe, env, args.restart)
            if run:  # the first one fills the bytecode cache
                for name, us in times.items():
                    best[name] = min(us, best.get(name, us))
    own = {n: us for n, us in best.items() if n.split(".")[0] in OWN}
    other = {n: us for n, us in best.items() if n not in own}
    by_package: collections.Counter[str] = collections.Counter()
    for name, us in own.items():
        by_package[".".join(name.split(".")[: 4 if name.startswith("kafkito.") else 3])] += us
    by_top: collections.Counter[str] = collections.Counter()
    for name, us in other.items():
        by_top[name.split(".")[0]] += us
    own_ms, other_ms = sum(own.values()) / 1000, sum(other.values()) / 1000
    print(
        f"{len(best)} modules: own {len(own)}, {own_ms:.1f} ms self; others {len(other)}, {other_ms:.1f} ms"
    )
    print(
        "own by package (ms):",
        ", ".join(f"{n} {us / 1000:.1f}" for n, us in by_package.most_common(args.top)),
    )
    print(
        "others by package (ms):", ", ".join(f"{n} {us / 1000:.1f}" for n, us in by_top.most_common(args.top))
    )
    top = sorted(best.items(), key=lambda item: -item[1])[: args.top]
    print("top modules (ms):", ", ".join(f"{n} {us / 1000:.2f}" for n, us in top))


if __name__ == "__main__":
    main()
