"""Task sets: the active, standby and warm-up tasks of a member, each by subtopology id.

A task is (subtopology id, partition). Maps are plain dicts of frozensets with no empty entries, so
two equal assignments compare equal whatever their history.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

TaskMap = dict[str, frozenset[int]]
"""subtopology id -> partitions (no empty sets)."""
WireTasks = tuple[tuple[str, tuple[int, ...]], ...]
"""Tasks as the wire and the records carry them: sorted by subtopology id, partitions sorted."""
Task = tuple[str, int]


def task_map(pairs: Iterable[tuple[str, Iterable[int]]]) -> TaskMap:
    out: dict[str, set[int]] = {}
    for subtopology, partitions in pairs:
        out.setdefault(subtopology, set()).update(partitions)
    return {s: frozenset(p) for s, p in out.items() if p}


def to_wire(tasks: Mapping[str, frozenset[int]]) -> WireTasks:
    return tuple((s, tuple(sorted(tasks[s]))) for s in sorted(tasks) if tasks[s])


def each(tasks: Mapping[str, frozenset[int]]) -> Iterator[Task]:
    for subtopology in sorted(tasks):
        for partition in sorted(tasks[subtopology]):
            yield subtopology, partition


def union(a: Mapping[str, frozenset[int]], b: Mapping[str, frozenset[int]]) -> TaskMap:
    out = dict(a)
    for s, p in b.items():
        out[s] = out.get(s, frozenset()) | p
    return {s: p for s, p in out.items() if p}


def overlaps(a: Mapping[str, frozenset[int]], b: Mapping[str, frozenset[int]]) -> bool:
    return any(not p.isdisjoint(b.get(s, ())) for s, p in a.items())


def count(tasks: Mapping[str, frozenset[int]]) -> int:
    return sum(len(p) for p in tasks.values())


class TaskSet(NamedTuple):
    """A member's tasks by role (Kafka's TasksTuple)."""

    active: TaskMap
    standby: TaskMap
    warmup: TaskMap

    @classmethod
    def empty(cls) -> TaskSet:
        return cls({}, {}, {})

    @classmethod
    def of_wire(cls, active: WireTasks, standby: WireTasks, warmup: WireTasks) -> TaskSet:
        return cls(task_map(active), task_map(standby), task_map(warmup))

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def merge(self, other: TaskSet) -> TaskSet:
        return TaskSet(
            union(self.active, other.active),
            union(self.standby, other.standby),
            union(self.warmup, other.warmup),
        )

    def contains_any(self, other: TaskSet) -> bool:
        """Whether any task of `other` is in this set in the same role."""
        return (
            overlaps(other.active, self.active)
            or overlaps(other.standby, self.standby)
            or overlaps(other.warmup, self.warmup)
        )

    def wire(self) -> tuple[WireTasks, WireTasks, WireTasks]:
        return to_wire(self.active), to_wire(self.standby), to_wire(self.warmup)
