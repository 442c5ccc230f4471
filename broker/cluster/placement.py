"""Kafka's rack-unaware replica placement: leaders round-robin over the brokers from a start index,
followers shifted so that replica sets differ (AdminUtils.assignReplicasToBrokersRackUnaware).

Kafka draws the start index and the shift at random; kafkito derives them from the topic name, so
that a topic's placement is the same on every run and after a restart.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence


def start_index(topic: str, brokers: int) -> int:
    """Where `topic`'s first partition's leader falls among `brokers` (stable across runs)."""
    return zlib.crc32(topic.encode()) % brokers if brokers else 0


def assign(topic: str, partitions: int, replication: int, brokers: Sequence[int]) -> list[list[int]]:
    """The replicas of each partition, preferred leader first, over `brokers` (sorted node ids)."""
    n = len(brokers)
    if replication > n:
        raise ValueError(f"replication factor {replication} is larger than the {n} available brokers")
    start = start_index(topic, n)
    shift = start
    out: list[list[int]] = []
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [brokers[first]]
        for j in range(replication - 1):
            replicas.append(brokers[_replica_index(first, shift, j, n)])
        out.append(replicas)
    return out


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    step = 1 + (shift + j) % (n - 1)
    return (first + step) % n
