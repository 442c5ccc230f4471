"""Benchmark `__consumer_offsets`: commits/s through the coordinator, restart time before/after compaction.

Two measurements, reported as ratios within one run:
  (a) OffsetCommit throughput through the GroupCoordinator (generation -1 commits over many groups)
      with the in-memory store (the coordinator's own cost), the log store (one batch appended to
      `__consumer_offsets` per commit, written to the OS before the ack) and the log store with an
      fsync per commit (log.flush.interval.messages=1);
  (b) restart time (log recovery + replay into the coordinator) with `--records` commit records for
      `--groups` groups, before and after compacting every partition.

Usage: python bench/offsets.py [--commits 20000] [--records 1000000] [--groups 10000] [--markdown]
       [--reload-only]   (b) alone: issue 21's "1M records in `__consumer_offsets` to reload"
       [--reload-only --baseline DIR]   the restarts of this tree and of the checkout in DIR (say a
                         `git worktree` of the tree before a change), alternating, each in a fresh
                         process on the same data: wall and CPU seconds, and a digest of the state
                         each rebuilt (it must be the same)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import structlog

from kafkito.broker.coordinator import (
    CoordinatorConfig,
    GroupCoordinator,
    InMemoryRecordSink,
    OffsetAndMetadata,
    OffsetCommitRequest,
    RecordSink,
    TopicPartition,
)
from kafkito.broker.log import cleaner
from kafkito.broker.log.manager import LogManager
from kafkito.broker.log.partition_log import wall_clock_ms
from kafkito.broker.offsets import OFFSETS_TOPIC, OffsetsConfig, OffsetsManager
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.records import (
    GroupValue,
    OffsetValue,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
)
from kafkito.purgatory import SteerableClock, Timer

PARTITIONS_PER_GROUP = 10


def quiet_logs() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))


def commit_rate(store_kind: str, commits: int, partitions: int, data_dir: Path) -> float:
    """Commits per second through GroupCoordinator.commit_offsets with one kind of store."""
    clock = SteerableClock()
    logs: LogManager | None = None
    store: RecordSink
    if store_kind == "memory":
        store = InMemoryRecordSink()
    else:
        props: dict[str, Any] = {"log.flush.interval.messages": 1} if store_kind == "log+fsync" else {}
        logs = LogManager(data_dir, props)
        manager = OffsetsManager(logs, OffsetsConfig(), clock)
        store = manager.sink
    coordinator = GroupCoordinator(CoordinatorConfig(), clock, Timer(clock), store)
    if logs is not None:
        manager.load_now(coordinator)
    groups = [f"group-{i}" for i in range(100)]
    tps = [TopicPartition("topic", p) for p in range(partitions)]
    acks = 0

    def on_ack(errors: dict[TopicPartition, Any]) -> None:
        nonlocal acks
        acks += 1

    gc.collect()
    started = time.perf_counter()
    for i in range(commits):
        offsets = {tp: OffsetAndMetadata(i) for tp in tps}
        request = OffsetCommitRequest(groups[i % len(groups)], "", None, -1, offsets)
        coordinator.commit_offsets(request, on_ack)
    elapsed = time.perf_counter() - started
    assert acks == commits
    if logs is not None:
        logs.close()
    return commits / elapsed


def write_history(data_dir: Path, records: int, groups: int) -> tuple[int, int]:
    """`records` offset commit records (batches of PARTITIONS_PER_GROUP) plus one group record per group."""
    logs = LogManager(data_dir, {})
    manager = OffsetsManager(logs, OffsetsConfig(), SteerableClock())
    manager.ensure_topic()  # created on first use, as Kafka does
    store = manager.sink
    now = wall_clock_ms()
    group_ids = [f"consumer-group-{i}" for i in range(groups)]
    written = 0
    for group in group_ids:
        value = GroupValue("consumer", 7, None, None, (), now)
        logs.get_log(OFFSETS_TOPIC, store.partition_for(group)).append(
            build_batch([(encode_group_key(group), encode_group_value(value))], now)
        )
    round_ = 0
    while written < records:
        for group in group_ids:
            batch = [
                (
                    encode_offset_key(group, "events", p),
                    encode_offset_value(OffsetValue(round_ * 1000 + p, "", now, 3)),
                )
                for p in range(PARTITIONS_PER_GROUP)
            ]
            logs.get_log(OFFSETS_TOPIC, store.partition_for(group)).append(build_batch(batch, now))
            written += len(batch)
            if written >= records:
                break
        round_ += 1
    size = sum(logs.get_log(OFFSETS_TOPIC, p).size_bytes for p in range(manager.num_partitions))
    logs.close()
    return written, size


def restart(data_dir: Path) -> tuple[float, float, int, int]:
    """(log open s, replay s, groups, offsets) of a broker start on `data_dir`."""
    gc.collect()
    started = time.perf_counter()
    logs = LogManager(data_dir, {})
    opened = time.perf_counter()
    clock = SteerableClock()
    manager = OffsetsManager(logs, OffsetsConfig(), clock)
    coordinator = GroupCoordinator(CoordinatorConfig(), clock, Timer(clock), manager.sink)
    manager.load_now(coordinator)
    loaded = time.perf_counter()
    groups = coordinator.groups()
    offsets = sum(len(g.offsets) for g in groups)
    logs.close()
    return opened - started, loaded - opened, len(groups), offsets


# Run in a fresh process with the tree to time on sys.path (this one, or --baseline's): only APIs
# both trees have. Prints JSON: wall and CPU seconds of the log open and of the replay, and a digest
# of the groups and offsets rebuilt.
RESTART_SCRIPT = """
import gc, hashlib, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import structlog
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator
from kafkito.broker.log.manager import LogManager
from kafkito.broker.log.partition_log import wall_clock_ms
from kafkito.broker.offsets import OffsetsConfig, OffsetsManager
from kafkito.purgatory import SteerableClock, Timer
gc.collect()
w0, c0 = time.perf_counter(), time.process_time()
logs = LogManager(Path(sys.argv[2]), {})
w1, c1 = time.perf_counter(), time.process_time()
clock = SteerableClock()
manager = OffsetsManager(logs, OffsetsConfig(), clock)
coordinator = GroupCoordinator(CoordinatorConfig(), clock, Timer(clock), manager.sink)
manager.load_now(coordinator)
w2, c2 = time.perf_counter(), time.process_time()
digest = hashlib.sha256()
groups = sorted(coordinator.groups(), key=lambda g: g.group_id)
for g in groups:
    digest.update(repr((g.group_id, g.generation_id, g.protocol_type, g.state.name)).encode())
    for tp, o in sorted(g.offsets.items()):
        commit = o.commit_timestamp_ms
        digest.update(repr((tp, o.offset, o.metadata, o.leader_epoch, commit)).encode())
logs.close()
print(json.dumps(dict(open=w1 - w0, replay=w2 - w1, open_cpu=c1 - c0, replay_cpu=c2 - c1,
                      groups=len(groups), offsets=sum(len(g.offsets) for g in groups),
                      digest=digest.hexdigest())))
"""


def restart_in(tree: Path, data_dir: Path) -> dict[str, Any]:
    """A restart of the code in `tree` on `data_dir`, in a fresh process (see RESTART_SCRIPT)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", RESTART_SCRIPT, str(tree), str(data_dir)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def compare_reloads(data: Path, baseline: Path, repeats: int) -> None:
    """Restarts of this tree and of `baseline` on `data`, alternating; the best of each, and the ratio."""
    this_tree = Path(__file__).resolve().parent.parent
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for _ in range(repeats):
        runs["before"].append(restart_in(baseline, data))
        runs["after"].append(restart_in(this_tree, data))
    print(f"\nrestarts, {repeats} of each, alternating (best of each: wall, then CPU seconds)")
    print("\n| tree | log open (s) | replay (s) | restart (s) | restart CPU (s) | groups | offsets |")
    print("|---|---|---|---|---|---|---|")
    best = {}
    for label, tree in (("before", baseline), ("after", this_tree)):
        wall = min(runs[label], key=lambda r: r["open"] + r["replay"])
        cpu = min(r["open_cpu"] + r["replay_cpu"] for r in runs[label])
        best[label] = (wall["open"] + wall["replay"], cpu)
        print(
            f"| {label} ({tree}) | {wall['open']:.2f} | {wall['replay']:.2f} | {best[label][0]:.2f} "
            f"| {cpu:.2f} | {wall['groups']:,} | {wall['offsets']:,} |"
        )
    print(
        f"\nafter vs before: restart {best['after'][0] / best['before'][0]:.2f}x wall, "
        f"{best['after'][1] / best['before'][1]:.2f}x CPU"
    )
    digests = {r["digest"] for label in runs for r in runs[label]}
    assert len(digests) == 1, "the two trees rebuilt different states"
    print("both trees rebuilt the same groups and offsets (one digest)")


def compact_all(data_dir: Path) -> tuple[float, int, int]:
    logs = LogManager(data_dir, {})
    started = time.perf_counter()
    before = after = 0
    for p in range(logs.topic(OFFSETS_TOPIC).partitions):  # type: ignore[union-attr]
        plog = logs.get_log(OFFSETS_TOPIC, p)
        plog.roll()  # the active segment is never cleaned: close it, as segment.bytes/ms would
        plan = cleaner.compact(plog, wall_clock_ms(), force=True)
        if plan is not None:
            before += plan.records_before
            after += plan.records_after
    elapsed = time.perf_counter() - started
    logs.close()
    return elapsed, before, after


def best(fn: Callable[[], float], repeats: int) -> float:
    return max(fn() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--reload-only", action="store_true", help="only (b): the restarts")
    parser.add_argument(
        "--baseline", type=Path, help="with --reload-only: also restart the checkout in this directory"
    )
    args = parser.parse_args()
    quiet_logs()
    root = Path(tempfile.mkdtemp(prefix="kafkito-bench-offsets-"))
    try:
        print(f"python {platform.python_version()} on {platform.machine()}, {args.commits} commits per run")
        rows = []
        for partitions in () if args.reload_only else (1, PARTITIONS_PER_GROUP):
            rates = {}
            for kind in ("memory", "log", "log+fsync"):
                n = args.commits if kind != "log+fsync" else max(args.commits // 10, 100)

                def run(kind: str = kind, n: int = n, partitions: int = partitions) -> float:
                    d = Path(tempfile.mkdtemp(dir=root))
                    try:
                        return commit_rate(kind, n, partitions, d)
                    finally:
                        shutil.rmtree(d, ignore_errors=True)

                rates[kind] = best(run, args.repeats)
            rows.append((partitions, rates))
        if rows:
            print(
                "\n| partitions per commit | in-memory store (commits/s) | log store | log + fsync each "
                "| log vs memory |"
            )
            print("|---|---|---|---|---|")
        for partitions, rates in rows:
            print(
                f"| {partitions} | {rates['memory']:,.0f} | {rates['log']:,.0f} | {rates['log+fsync']:,.0f} "
                f"| {rates['log'] / rates['memory']:.2f}x |"
            )

        data = root / "history"
        started = time.perf_counter()
        written, size = write_history(data, args.records, args.groups)
        wrote_s = time.perf_counter() - started
        print(
            f"\nwrote {written:,} commit records + {args.groups:,} group records "
            f"({size / 1e6:.0f} MB) in {wrote_s:.1f} s ({written / wrote_s:,.0f} records/s)"
        )
        if args.baseline is not None:
            compare_reloads(data, args.baseline.resolve(), args.repeats)
            return
        before = min((restart(data) for _ in range(args.repeats)), key=lambda r: r[0] + r[1])
        compact_s, records_before, records_after = compact_all(data)
        after = min((restart(data) for _ in range(args.repeats)), key=lambda r: r[0] + r[1])
        size_after = sum(f.stat().st_size for f in data.glob(f"{OFFSETS_TOPIC}-*/*.log"))
        print(
            f"compaction: {records_before:,} -> {records_after:,} records, "
            f"{size / 1e6:.0f} -> {size_after / 1e6:.1f} MB in {compact_s:.1f} s"
        )
        print(
            "\n| on disk | records | log open (s) | replay into coordinator (s) | restart (s) "
            "| groups | offsets |"
        )
        print("|---|---|---|---|---|---|---|")
        for label, records, (open_s, replay_s, groups, offsets) in (
            ("before compaction", written + args.groups, before),
            ("after compaction", records_after, after),
        ):
            print(
                f"| {label} | {records:,} | {open_s:.2f} | {replay_s:.2f} | {open_s + replay_s:.2f} "
                f"| {groups:,} | {offsets:,} |"
            )
        ratio = (after[0] + after[1]) / (before[0] + before[1])
        print(f"\nrestart after compaction vs before: {ratio:.2f}x")
        assert before[2:] == after[2:], "compaction changed what a restart loads"
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
