"""What the leadership check costs on the Produce/Fetch paths: dispatch of one request, in-process,
on a one-node broker and on each node of a three-node cluster that leads the partition.

Run: .venv/bin/python bench/cluster_routing.py [--number 20000] [--repeat 5]

Prints µs per request (best of `--repeat` runs of `--number` dispatches, on the broker's loop, no
socket) and the cluster / one-node ratio, then the cost of the check itself: one dict lookup of
(topic, partition) per partition.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import timeit
from collections.abc import Callable
from typing import Any

from kafka.record.memory_records import MemoryRecordsBuilder

import kafkito.testing
from kafkito.broker.dispatch import dispatch
from kafkito.protocol.codec import build_request

TOPIC = "bench"


def _frame(request: Any) -> bytes:
    request.with_header(correlation_id=1, client_id="bench")
    return bytes(request.encode(header=True, framed=True))[4:]


def _produce() -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.append(0, None, b"x" * 100, [])
    builder.close()
    records = builder.buffer()
    data = [dict(name=TOPIC, partition_data=[dict(index=0, records=records)])]
    return _frame(build_request(0, 9, transactional_id=None, acks=1, timeout_ms=1000, topic_data=data))


def _fetch() -> bytes:
    part = dict(partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                log_start_offset=-1, partition_max_bytes=1 << 16)  # fmt: skip
    return _frame(build_request(1, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                                isolation_level=0, session_id=0, session_epoch=-1,
                                topics=[dict(topic=TOPIC, partitions=[part])], forgotten_topics_data=[],
                                rack_id=""))  # fmt: skip


def _time(handle: kafkito.testing.KafkitoHandle, frame: bytes, number: int, repeat: int) -> float:
    broker = handle.broker
    leader = handle.leader(TOPIC, 0) if broker.topology is not None else broker.config.node_id
    context = broker.nodes.contexts[leader]

    def run() -> float:
        start = time.perf_counter()
        for _ in range(number):
            dispatch(broker, frame, "127.0.0.1", context)
        return (time.perf_counter() - start) / number

    return min(handle.call(run) for _ in range(repeat)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases: dict[str, Callable[[], bytes]] = {"Produce v9 (acks=1, 1 record)": _produce, "Fetch v12": _fetch}
    results: dict[str, list[float]] = {name: [] for name in cases}
    for nodes in (1, 3):
        with (
            tempfile.TemporaryDirectory() as data_dir,
            kafkito.testing.start(
                nodes=nodes, data_dir=data_dir, log_level="warning", log_retention_check_interval_ms=3600000
            ) as handle,
        ):
            handle.create_topic(TOPIC, partitions=1, replication_factor=nodes)
            for name, build in cases.items():
                results[name].append(_time(handle, build(), args.number, args.repeat))
    print(f"{'request':32} {'1 node µs':>10} {'3 nodes µs':>11} {'ratio':>6}")
    for name, (one, three) in results.items():
        print(f"{name:32} {one:10.2f} {three:11.2f} {three / one:6.2f}")
    leaders = {(f"topic-{i}", p): 1 for i in range(100) for p in range(10)}
    name, index = "topic-42", 3
    ns = min(timeit.repeat(lambda: leaders.get((name, index)), number=1_000_000, repeat=5)) * 1000
    print(f"the check itself: leaders.get((topic, partition)) {ns:.0f} ns per partition")


if __name__ == "__main__":
    main()
