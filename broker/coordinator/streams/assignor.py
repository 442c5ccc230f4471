"""The sticky task assignor (Kafka's StickyTaskAssignor, `group.streams.assignors` "sticky").

Active tasks are spread evenly over the members (at most one apart), each kept by its previous owner
while that keeps the spread, otherwise given to the least loaded member (preferring one on a process
that already holds the task as a standby, whose state is warm). Standby tasks (`num.standby.replicas`
per task) go to other processes than the active's, never twice to one process, sticky first, then to
the least loaded process. Deterministic: ties break on member id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from kafkito.broker.coordinator.streams.tasks import Task, TaskSet, task_map

NAME = "sticky"


@dataclass(slots=True, frozen=True)
class AssignmentMember:
    """What the assignor knows of a member: its process and the tasks it has now."""

    member_id: str
    process_id: str
    current: TaskSet


def assign(
    members: Mapping[str, AssignmentMember], task_counts: Mapping[str, int], num_standby_replicas: int
) -> dict[str, TaskSet]:
    """The target assignment of every member."""
    if not members:
        return {}
    ids = sorted(members)
    tasks: list[Task] = [(s, p) for s in sorted(task_counts) for p in range(task_counts[s])]
    active = _assign_active(members, ids, tasks)
    standby = _assign_standby(members, ids, tasks, active, num_standby_replicas)
    out: dict[str, TaskSet] = {}
    for member_id in ids:
        mine_active = [(s, [p]) for (s, p), owner in active.items() if owner == member_id]
        mine_standby = [(s, [p]) for (s, p), holders in standby.items() if member_id in holders]
        out[member_id] = TaskSet(task_map(mine_active), task_map(mine_standby), {})
    return out


def _assign_active(
    members: Mapping[str, AssignmentMember], ids: list[str], tasks: list[Task]
) -> dict[Task, str]:
    load = dict.fromkeys(ids, 0)
    owner = _keep_previous(members, ids, tasks, load)
    warm: dict[Task, set[str]] = defaultdict(set)
    for member_id in ids:
        current = members[member_id].current
        for s, partitions in (*current.standby.items(), *current.warmup.items()):
            for p in partitions:
                warm[(s, p)].add(members[member_id].process_id)
    for task in tasks:
        if task in owner:
            continue
        least = min(load.values())
        candidates = [m for m in ids if load[m] == least]
        chosen = next((m for m in candidates if members[m].process_id in warm.get(task, ())), candidates[0])
        owner[task] = chosen
        load[chosen] += 1
    return owner


def _keep_previous(
    members: Mapping[str, AssignmentMember], ids: list[str], tasks: list[Task], load: dict[str, int]
) -> dict[Task, str]:
    """Sticky: a previous owner keeps up to the even share, then one more while extras remain."""
    floor, extras = divmod(len(tasks), len(ids))
    owner: dict[Task, str] = {}
    previous: dict[Task, str] = {}
    for member_id in ids:
        for s, partitions in members[member_id].current.active.items():
            for p in partitions:
                previous.setdefault((s, p), member_id)
    valid = set(tasks)
    # Partition first, as Kafka's: a member keeps the same partitions of each subtopology (range-like).
    by_partition = sorted(previous, key=lambda task: (task[1], task[0]))
    for bound in (floor, floor + 1):
        for task in by_partition:
            member_id = previous[task]
            if task in owner or task not in valid or load[member_id] >= bound:
                continue
            if bound > floor:
                if extras == 0:
                    break
                extras -= 1
            owner[task] = member_id
            load[member_id] += 1
    return owner


def _assign_standby(
    members: Mapping[str, AssignmentMember],
    ids: list[str],
    tasks: list[Task],
    active: Mapping[Task, str],
    replicas: int,
) -> dict[Task, set[str]]:
    holders: dict[Task, set[str]] = defaultdict(set)
    if replicas <= 0:
        return holders
    process_of = {m: members[m].process_id for m in ids}
    load = {m: 0 for m in ids}
    for member_id in active.values():
        load[member_id] += 1
    previous: dict[Task, list[str]] = defaultdict(list)
    for member_id in ids:
        for s, partitions in members[member_id].current.standby.items():
            for p in partitions:
                previous[(s, p)].append(member_id)
    for task in tasks:
        used = {process_of[active[task]]}
        for _ in range(replicas):
            sticky = [m for m in previous.get(task, ()) if process_of[m] not in used]
            if sticky:
                chosen = sticky[0]
            else:
                candidates = [m for m in ids if process_of[m] not in used]
                if not candidates:
                    break  # fewer processes than replicas: Kafka leaves the rest unassigned
                chosen = min(candidates, key=lambda m: (load[m], m))
            holders[task].add(chosen)
            used.add(process_of[chosen])
            load[chosen] += 1
    return holders
