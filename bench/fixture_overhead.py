"""What a fresh broker per test costs: the `kafkito` fixture (function-scoped) against `kafkito_session`.

Run: .venv/bin/python bench/fixture_overhead.py [--tests 50] [--runs 3] [--starts 20]

1. A generated suite of `--tests` tests, each producing one record with kafka-python and reading the
   topic's end offset back, is run by pytest in a subprocess twice: every test with a broker of its
   own (`kafkito`), and all of them on one broker (`kafkito_session`). The two runs differ only in
   the fixture, so (function - session) / tests is the per-test overhead of a fresh broker (its
   start, temporary data dir and stop). Runs alternate (machine noise hits both alike); medians.
2. The start-up time of an in-process broker, `kafkito.testing.start()` until its port answers,
   and its `stop()`, measured in a fresh interpreter: the first start (with the broker's imports)
   and the following `--starts` (the fixture's steady state).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

SUITE = textwrap.dedent(
    """
    import pytest
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    FIXTURE = {fixture!r}


    @pytest.fixture
    def broker(request):
        return request.getfixturevalue(FIXTURE)


    @pytest.mark.parametrize("n", range({tests}))
    def test_one_record(broker, n):
        topic = f"bench-{{n}}"
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        producer.send(topic, b"x").get(timeout=30)
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
        tp = TopicPartition(topic, 0)
        assert consumer.end_offsets([tp])[tp] == 1
        consumer.close()
    """
)

STARTUP = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    import kafkito.testing
    imported = time.perf_counter() - t0
    starts, stops = [], []
    for _ in range(int(sys.argv[1]) + 1):
        t = time.perf_counter()
        handle = kafkito.testing.start()
        starts.append(time.perf_counter() - t)
        t = time.perf_counter()
        handle.stop()
        stops.append(time.perf_counter() - t)
    print(json.dumps({"import": imported, "starts": starts, "stops": stops}))
    """
)


def run_suite(directory: Path, fixture: str, tests: int) -> float:
    """Seconds for pytest to run the generated suite with `fixture`, in a fresh interpreter."""
    module = directory / f"test_bench_{fixture}.py"
    module.write_text(SUITE.format(fixture=fixture, tests=tests))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", module.name]
    t0 = time.perf_counter()
    result = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if result.returncode != 0 or f"{tests} passed" not in result.stdout:
        raise SystemExit(f"the {fixture} suite failed:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}")
    return elapsed


def measure_startup(starts: int) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", STARTUP, str(starts)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"the start-up measure failed:\n{result.stderr[-4000:]}")
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return {
        "import_ms": data["import"] * 1000,
        "first_start_ms": data["starts"][0] * 1000,
        "start_ms": statistics.median(data["starts"][1:]) * 1000,
        "stop_ms": statistics.median(data["stops"][1:]) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"kafkito": [], "kafkito_session": []}
    with tempfile.TemporaryDirectory(prefix="kafkito-bench-") as tmp:
        for _ in range(args.runs):
            for fixture in times:
                times[fixture].append(run_suite(Path(tmp), fixture, args.tests))
    function_s = statistics.median(times["kafkito"])
    session_s = statistics.median(times["kafkito_session"])
    startup = measure_startup(args.starts)
    print(f"suite of {args.tests} tests, median of {args.runs} runs each (pytest in a subprocess):")
    for name, seconds in (
        ("function-scoped `kafkito`", function_s),
        ("session-scoped `kafkito_session`", session_s),
    ):
        print(f"  {name + ':':35} {seconds:7.2f} s  ({seconds / args.tests * 1000:6.1f} ms/test)")
    print(f"  per-test overhead of a fresh broker: {(function_s - session_s) / args.tests * 1000:.1f} ms")
    print(f"in-process broker (kafkito.testing.start), median of {args.starts} after the first:")
    print(f"  import kafkito.testing: {startup['import_ms']:.1f} ms")
    print(f"  first start:            {startup['first_start_ms']:.1f} ms")
    print(f"  start:                  {startup['start_ms']:.1f} ms")
    print(f"  stop:                   {startup['stop_ms']:.1f} ms")
    print(f"raw: {json.dumps(times)}")


if __name__ == "__main__":
    main()
