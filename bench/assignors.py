"""Benchmark the KIP-848 server-side assignors (`uniform`, `range`): the time of one assignment.

Scenarios: members x partitions over topics, subscriptions the same for every member (homogeneous)
or a random subset of topics each (heterogeneous), with and without racks. For each: the first
assignment (nobody holds anything), the steady state (the previous output as the current
assignment: what every group epoch bump without membership change costs), one member joining and
one leaving. The figure is the median wall time of `--rounds` runs, in milliseconds, in this process.

Usage: python bench/assignors.py [--rounds 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkito.broker.coordinator.consumer.assignors import (
    ASSIGNORS,
    Assignor,
    GroupAssignment,
    MemberSpec,
    TopicSpec,
)

RACKS = ("rack-a", "rack-b", "rack-c")


def make_topics(count: int, partitions: int, racks: bool, rng: random.Random) -> dict[uuid.UUID, TopicSpec]:
    topics = {}
    for index in range(count):
        topic_id = uuid.UUID(int=rng.getrandbits(128))
        partition_racks = {p: frozenset(rng.sample(RACKS, 2)) for p in range(partitions)} if racks else {}
        topics[topic_id] = TopicSpec(topic_id, f"topic-{index:04d}", partitions, partition_racks)
    return topics


def make_members(
    count: int, topics: Mapping[uuid.UUID, TopicSpec], per_member: int | None, racks: bool, rng: random.Random
) -> dict[str, MemberSpec]:
    ids = sorted(topics)
    members = {}
    for index in range(count):
        subscribed = frozenset(ids if per_member is None else rng.sample(ids, per_member))
        rack = RACKS[index % len(RACKS)] if racks else None
        members[f"member-{uuid.UUID(int=rng.getrandbits(128))}"] = MemberSpec(subscribed, rack, None, {})
    return members


def timed(
    assignor: Assignor, members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec], rounds: int
) -> tuple[float, GroupAssignment]:
    times = []
    result: GroupAssignment = {}
    for _ in range(rounds):
        started = time.perf_counter()
        result = assignor.assign(members, topics)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, result


def scenario(
    name: str,
    assignor: Assignor,
    members: dict[str, MemberSpec],
    topics: dict[uuid.UUID, TopicSpec],
    rounds: int,
) -> None:
    first_ms, first = timed(assignor, members, topics, rounds)
    steady = {m: spec._replace(assigned=first[m]) for m, spec in members.items()}
    steady_ms, _ = timed(assignor, steady, topics, rounds)
    some = next(iter(steady.values()))
    joined = {**steady, "member-joining": some._replace(assigned={})}
    join_ms, _ = timed(assignor, joined, topics, rounds)
    left = dict(steady)
    left.pop(next(iter(left)))
    leave_ms, _ = timed(assignor, left, topics, rounds)
    print(f"{name:<58} {first_ms:>9.1f} {steady_ms:>9.1f} {join_ms:>9.1f} {leave_ms:>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"python {platform.python_version()} on {platform.machine()}; median of {args.rounds} runs, ms")
    print(f"{'scenario':<58} {'first':>9} {'steady':>9} {'join':>9} {'leave':>9}")
    shapes = [
        # (members, topics, partitions per topic, topics per member or None = all, racks)
        (1000, 1, 1000, None, False),
        (1000, 10, 100, None, False),
        (1000, 1, 1000, None, True),
        (1000, 100, 100, None, False),
        (1000, 100, 10, 10, False),
        (1000, 100, 10, 10, True),
        (1000, 1000, 10, 5, False),
    ]
    for members_count, topic_count, partitions, per_member, racks in shapes:
        topics = make_topics(topic_count, partitions, racks, rng)
        members = make_members(members_count, topics, per_member, racks, rng)
        kind = "homogeneous" if per_member is None else f"{per_member} topics each"
        kind += ", racks" if racks else ""
        shape = f"{members_count} members, {topic_count}x{partitions} partitions, {kind}"
        for name, assignor in ASSIGNORS.items():
            scenario(f"{name:<8}{shape}", assignor, members, topics, args.rounds)


if __name__ == "__main__":
    main()
