"""KIP-848 consumer groups beside classic groups, in one run: group formation time and heartbeat cost.

Run: .venv/bin/python bench/consumer_groups.py [--sizes 10,100,1000] [--runs 3] [--members 1000]
                                              [--connections 100] [--window 64] [--seconds 5]
                                              [--baseline DIR] [--set KEY=VALUE ...]

Raw heartbeats over the wire: an asyncio load generator (no client library) against a `kafkito serve`
process on 127.0.0.1, a fresh broker for each measurement, the two protocols interleaved run by run.

(a) Formation, N members each on its own connection, starting at once:
    - classic: bench/coordinator.py's consumer-like members (JoinGroup v9 + SyncGroup v5, the leader
      assigns, Heartbeat every 100 ms, rejoin on REBALANCE_IN_PROGRESS), with
      group.initial.rebalance.delay.ms=0; done when every member holds the final generation.
    - consumer (KIP-848): ConsumerGroupHeartbeat v1 joins (epoch 0, a topic of N partitions, the
      broker's default `uniform` assignor), then a heartbeat every 100 ms reporting the partitions the
      member owns, and one at once when its assignment changed (as clients acknowledge); done when
      every member is at the same member epoch, the latest any answer carried, and their
      assignments cover the topic's partitions once, each member holding its share (one
      partition: with assignment batching, members that joined within the interval are at the last
      target's epoch with nothing until the next assignment).
    Reported: time from the first request until done.
(b) Heartbeat cost: `--members` members form a group, then `--connections` fresh connections each
    carry members/connections of them and keep `--window` heartbeats in flight (classic Heartbeat v4;
    ConsumerGroupHeartbeat v1 of a reconciled member, nothing changed); every answer must be error 0.
    Reported: heartbeats per second and broker CPU microseconds per heartbeat over `--seconds`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from coordinator import Connection, HeartbeatPipe, form, frame  # bench/coordinator.py (classic groups)
from coordinator import heartbeats as classic_heartbeats
from kafka.protocol.admin import CreateTopicsResponse
from procs import cpu_seconds, free_port, kafkito_executable, wait_for_port

from kafkito.protocol.codec import RESPONSES, build_request

TOPIC = "bench-topic"
HEARTBEAT = 68
VERSION = 1
REBALANCE_TIMEOUT_MS = 60_000


@contextmanager
def kafkito(exe: str, extra: tuple[str, ...] = ()) -> Iterator[tuple[int, int]]:
    """A broker with no initial rebalance delay and Kafka's consumer-group defaults (`extra`: more
    `kafkito serve` arguments)."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
             "--log-level", "warning", "--set", "group.initial.rebalance.delay.ms=0", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for_port(port)
            yield port, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=60)


async def create_topic(port: int, partitions: int) -> None:
    connection = await Connection.open(port)
    topic = dict(name=TOPIC, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
    request = build_request(19, 5, topics=[topic], timeout_ms=60_000, validate_only=False)
    response = await connection.call(request, CreateTopicsResponse, 5)
    connection.close()
    if response.topics[0].error_code != 0:
        raise RuntimeError(f"CreateTopics: error {response.topics[0].error_code}")


def heartbeat_request(
    group: str, member_id: str, epoch: int, owned: list[tuple[uuid.UUID, list[int]]] | None
) -> Any:
    joining = epoch == 0
    return build_request(
        HEARTBEAT, VERSION, group_id=group, member_id=member_id, member_epoch=epoch, instance_id=None,
        rack_id=None, rebalance_timeout_ms=REBALANCE_TIMEOUT_MS if joining else -1,
        subscribed_topic_names=[TOPIC] if joining else None, subscribed_topic_regex=None,
        server_assignor=None,
        topic_partitions=None if owned is None else [dict(topic_id=t, partitions=p) for t, p in owned],
    )  # fmt: skip


class NewFormation:
    """KIP-848 members forming one group; `done` once all are reconciled at the latest epoch."""

    def __init__(self, group: str, n: int, partitions: int) -> None:
        self.group, self.n, self.partitions = group, n, partitions
        self.epochs: dict[str, int] = {}
        self.owned: dict[str, list[tuple[uuid.UUID, list[int]]]] = {}
        self.latest = 0
        self.done = asyncio.Event()

    def _check(self) -> None:
        if len(self.epochs) < self.n or set(self.epochs.values()) != {self.latest}:
            return
        counts = [sum(len(parts) for _, parts in owned) for owned in self.owned.values()]
        # Balanced too: with assignment batching (group.consumer.assignment.interval.ms) members that
        # joined within the interval are at the last target's epoch with nothing while the first
        # member still owns everything; the uniform assignor's target gives each its share.
        share = self.partitions // self.n
        if any(not share <= c <= share + 1 for c in counts):
            return
        counted = sorted(p for owned in self.owned.values() for _, parts in owned for p in parts)
        if counted == list(range(self.partitions)):
            self.done.set()

    async def member(self, connection: Connection, start: asyncio.Event) -> None:
        await start.wait()
        member_id, epoch = str(uuid.uuid4()), 0
        owned: list[tuple[uuid.UUID, list[int]]] = []
        while not self.done.is_set():
            request = heartbeat_request(self.group, member_id, epoch, owned)
            response = await connection.call(request, RESPONSES[HEARTBEAT], VERSION)
            if response.error_code != 0:
                raise RuntimeError(f"heartbeat error {response.error_code}: {response.error_message}")
            epoch = response.member_epoch
            changed = False
            if response.assignment is not None:
                new = [(t.topic_id, list(t.partitions)) for t in response.assignment.topic_partitions]
                changed, owned = new != owned, new
            self.epochs[member_id], self.owned[member_id] = epoch, owned
            self.latest = max(self.latest, epoch)
            self._check()
            if not changed and not self.done.is_set():  # a changed assignment is acknowledged at once
                await asyncio.sleep(0.1)


async def new_form(
    port: int, group: str, n: int, partitions: int
) -> tuple[float, NewFormation, list[Connection]]:
    formation = NewFormation(group, n, partitions)
    connections = [await Connection.open(port) for _ in range(n)]
    start = asyncio.Event()
    tasks = [asyncio.create_task(formation.member(c, start)) for c in connections]
    t0 = time.perf_counter()
    start.set()
    await formation.done.wait()
    elapsed = time.perf_counter() - t0
    await asyncio.gather(*tasks)
    return elapsed, formation, connections


async def new_heartbeats(
    port: int, pid: int, members: int, connections: int, window: int, seconds: float
) -> tuple[float, float]:
    """ConsumerGroupHeartbeats per second, and broker CPU microseconds per heartbeat."""
    await create_topic(port, members)
    _, formed, setup = await new_form(port, "hb", members, members)
    for c in setup:
        c.close()
    ids = list(formed.epochs.items())
    loop = asyncio.get_running_loop()
    pipes: list[HeartbeatPipe] = []
    for i in range(connections):
        frames = [frame(heartbeat_request("hb", m, e, None), 1) for m, e in ids[i::connections]]
        _, pipe = await loop.create_connection(lambda f=frames: HeartbeatPipe(f, window), "127.0.0.1", port)
        pipes.append(pipe)
    await asyncio.sleep(1.0)  # warm-up
    before = sum(p.responses for p in pipes)
    cpu0 = cpu_seconds(pid)
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    count = sum(p.responses for p in pipes) - before
    elapsed = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0
    errors = sum(p.errors for p in pipes)
    for p in pipes:
        assert p.transport is not None
        p.transport.close()
    if errors:
        raise RuntimeError(f"{errors} heartbeats failed")
    return count / elapsed, cpu / count * 1e6


async def classic_formation(port: int, n: int) -> float:
    elapsed, _, connections = await form(port, "formation", n)
    for c in connections:
        c.close()
    return elapsed


async def new_formation(port: int, n: int) -> float:
    await create_topic(port, n)
    elapsed, _, connections = await new_form(port, "formation", n, n)
    for c in connections:
        c.close()
    return elapsed


Broker = tuple[str, str, tuple[str, ...]]  # name, `kafkito` executable, extra `serve` arguments


def formation_table(brokers: list[Broker], sizes: list[int], runs: int) -> None:
    print("(a) group formation, N members starting at once (first request -> all reconciled / synced)")
    print("| broker | protocol | members | median (ms) | min (ms) | max (ms) |")
    print("|---|---|---|---|---|---|")
    kinds = {"classic": classic_formation, "consumer (KIP-848)": new_formation}
    for n in sizes:
        times: dict[tuple[str, str], list[float]] = {(b[0], k): [] for b in brokers for k in kinds}
        for _ in range(runs):
            for kind, measure in kinds.items():  # interleaved: each sees the same machine noise
                for name, exe, extra in brokers:
                    with kafkito(exe, extra) as (port, _):
                        times[name, kind].append(asyncio.run(measure(port, n)) * 1000)
        for (name, kind), ts in times.items():
            print(f"| {name} | {kind} | {n} | {statistics.median(ts):.0f} | {min(ts):.0f} | {max(ts):.0f} |")


def heartbeat_table(brokers: list[Broker], args: argparse.Namespace) -> None:
    kinds = {"classic Heartbeat v4": classic_heartbeats, "ConsumerGroupHeartbeat v1": new_heartbeats}
    rates: dict[tuple[str, str], list[float]] = {(b[0], k): [] for b in brokers for k in kinds}
    costs: dict[tuple[str, str], list[float]] = {(b[0], k): [] for b in brokers for k in kinds}
    for _ in range(args.runs):
        for kind, measure in kinds.items():
            for name, exe, extra in brokers:
                with kafkito(exe, extra) as (port, pid):
                    rate, cost = asyncio.run(
                        measure(port, pid, args.members, args.connections, args.window, args.seconds)
                    )
                rates[name, kind].append(rate)
                costs[name, kind].append(cost)
    print(f"(b) heartbeats, {args.members} members over {args.connections} connections, window {args.window}")
    print("| broker | request | runs | median heartbeats/s | broker CPU per heartbeat (us) |")
    print("|---|---|---|---|---|")
    for name, kind in rates:
        print(f"| {name} | {kind} | {args.runs} | {statistics.median(rates[name, kind]):,.0f} "
              f"| {statistics.median(costs[name, kind]):.1f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10,100,1000", help="group sizes for (a); empty skips (a)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--members", type=int, default=1000, help="group size for (b); 0 skips (b)")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--window", type=int, default=64, help="heartbeats in flight per connection")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kafkito of DIR/.venv")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a property for this tree's broker"
    )
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    extra = tuple(arg for kv in args.set for arg in ("--set", kv))
    brokers: list[Broker] = [("kafkito", kafkito_executable(), extra)]
    if args.baseline:
        brokers.append((f"kafkito ({args.baseline})", kafkito_executable(args.baseline), ()))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        formation_table(brokers, sizes, args.runs)
    if args.members:
        print()
        heartbeat_table(brokers, args)


if __name__ == "__main__":
    main()
