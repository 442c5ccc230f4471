"""Share-group (KIP-932) fetch throughput: records/s handed to 1, 2 and 4 share consumers on one partition.

Run: .venv/bin/python bench/share_fetch.py [--members 1,2,4] [--records 300000] [--size 100] [--batch 100]

For each member count, a fresh `kafkito serve` process on 127.0.0.1 (Kafka's defaults, share groups on):
a topic of one partition is filled with `--records` records of `--size` bytes (confluent-kafka
Producer), the group's `share.auto.offset.reset` is set to earliest (AdminClient, GROUP config), then
N confluent-kafka ShareConsumers (librdkafka 2.16, implicit acknowledgement: each poll accepts the
previous poll's records), each in its own process so that no GIL is shared, subscribe and join. Once
the broker describes the group with all N members, they start polling together (t0). Reported: records
handed out per second from t0 to the last record any member received, the split between members,
every delivery beyond the first of a record (redeliveries; expected 0), the share-partition start
offset once all have closed (DescribeShareGroupOffsets: the records acknowledged; expected all), and
the broker's CPU time per record handed out.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from multiprocessing.synchronize import Barrier, Event
from typing import Any

from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)
from coordinator import Connection  # bench/coordinator.py
from procs import cpu_seconds, free_port, kafkito_executable, wait_for_port
from producing import produce_waiting  # bench/producing.py

from kafkito.protocol.codec import RESPONSES, build_request

TOPIC = "share-bench"
GROUP = "share-bench"
SHARE_GROUP_DESCRIBE = 77
DESCRIBE_OFFSETS = 90  # DescribeShareGroupOffsets


@contextmanager
def kafkito(exe: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
             "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for_port(port)
            yield f"127.0.0.1:{port}", proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def prepare(bootstrap: str, records: int, size: int, batch: int) -> None:
    """The topic, filled, and the group reading it from the earliest offset."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=1)])[TOPIC].result(30)
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, GROUP, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": batch})
    value = b"x" * size
    for _ in range(records):
        produce_waiting(producer, TOPIC, value, 0.05, partition=0)
    if producer.flush(60) != 0:
        raise RuntimeError("records left unsent")


def group_size(port: int) -> int:
    """How many members the broker's ShareGroupDescribe shows (a raw request, no client library)."""

    async def ask() -> int:
        connection = await Connection.open(port)
        request = build_request(
            SHARE_GROUP_DESCRIBE, 1, group_ids=[GROUP], include_authorized_operations=False
        )
        response = await connection.call(request, RESPONSES[SHARE_GROUP_DESCRIBE], 1)
        connection.close()
        return len(response.groups[0].members)

    return asyncio.run(ask())


def start_offset(port: int) -> int:
    """The group's share-partition start offset (DescribeShareGroupOffsets): records before it are done."""

    async def ask() -> int:
        connection = await Connection.open(port)
        topics = [dict(topic_name=TOPIC, partitions=[0])]
        request = build_request(DESCRIBE_OFFSETS, 1, groups=[dict(group_id=GROUP, topics=topics)])
        response = await connection.call(request, RESPONSES[DESCRIBE_OFFSETS], 1)
        connection.close()
        return int(response.groups[0].topics[0].partitions[0].start_offset)

    return asyncio.run(ask())


def member(bootstrap: str, ready: Barrier, stop: Event, results: Any, counted: Any) -> None:
    """One share consumer, in its own process: join, wait for the others, poll until told to stop."""
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    consumer.subscribe([TOPIC])
    ready.wait()  # every member created and subscribed
    ready.wait()  # the group has every member: go
    got, redelivered, last = 0, 0, 0.0
    while not stop.is_set():
        batch = [m for m in consumer.poll(0.2) if m.error() is None]
        if batch:
            last = time.monotonic()
            got += len(batch)
            redelivered += sum(1 for m in batch if (m.delivery_count() or 1) > 1)
            with counted.get_lock():
                counted.value += len(batch)
    consumer.close()
    results.put((got, redelivered, last))


def measure(exe: str, members: int, records: int, size: int, batch: int) -> dict[str, Any]:
    """One run with `members` share consumers: records/s from t0, per-member counts, redeliveries."""
    return measure_on(kafkito(exe), members, records, size, batch)


def measure_on(
    broker: AbstractContextManager[tuple[str, int]], members: int, records: int, size: int, batch: int
) -> dict[str, Any]:
    """`measure` on a broker given as a context manager that yields its bootstrap address and pid."""
    with broker as (bootstrap, pid):
        prepare(bootstrap, records, size, batch)
        ctx = mp.get_context("spawn")
        ready, stop = ctx.Barrier(members + 1), ctx.Event()
        results, counted = ctx.Queue(), ctx.Value("q", 0)
        procs = [
            ctx.Process(target=member, args=(bootstrap, ready, stop, results, counted))
            for _ in range(members)
        ]
        for proc in procs:
            proc.start()
        ready.wait(60)
        port = int(bootstrap.rsplit(":", 1)[1])
        deadline = time.monotonic() + 60
        while group_size(port) < members:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the group never had {members} members")
            time.sleep(0.1)
        t0, cpu0 = time.monotonic(), cpu_seconds(pid)
        ready.wait(60)
        while counted.value < records and time.monotonic() < t0 + 120:
            time.sleep(0.01)
        cpu = cpu_seconds(pid) - cpu0
        stop.set()
        outcomes = [results.get(timeout=60) for _ in procs]
        for proc in procs:
            proc.join(60)
        acknowledged = start_offset(port)  # every member has closed: its last records accepted
    delivered = sum(o[0] for o in outcomes)
    elapsed = max(o[2] for o in outcomes) - t0
    return {
        "members": members,
        "delivered": delivered,
        "seconds": elapsed,
        "rate": delivered / elapsed,
        "split": sorted((o[0] for o in outcomes), reverse=True),
        "redelivered": sum(o[1] for o in outcomes),
        "acknowledged": acknowledged,
        "cpu_us": cpu / delivered * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--members", default="1,2,4", help="member counts, one run each")
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=100, help="value bytes per record")
    parser.add_argument("--batch", type=int, default=100, help="records per produced batch")
    args = parser.parse_args()
    exe = kafkito_executable()
    print(
        f"share fetch: {args.records:,} records of {args.size} B on one partition, implicit acknowledgement"
    )
    print(f"(producer batches of {args.batch} records; each member a process of its own)")
    print(
        "| members | records/s | seconds | records per member | redelivered | start offset after "
        "| broker CPU per record (us) |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in (int(m) for m in args.members.split(",") if m):
        r = measure(exe, n, args.records, args.size, args.batch)
        split = " / ".join(f"{c:,}" for c in r["split"])
        print(f"| {n} | {r['rate']:,.0f} | {r['seconds']:.2f} | {split} | {r['redelivered']} "
              f"| {r['acknowledged']:,} | {r['cpu_us']:.1f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
