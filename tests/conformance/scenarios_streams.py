"""KIP-1071 streams groups through StreamsGroupHeartbeat and StreamsGroupDescribe: a group whose source
topic is missing; a member joins with a word-count topology (a repartition topic and a state store's
changelog, which the broker creates), gets every task once the initial rebalance delay is over, a second
member makes it revoke half, epochs from the future and the past are fenced, an unknown member id is
refused, a changed topology under the same epoch is refused, a newer topology epoch replaces the group's
and the member behind it is told STALE_TOPOLOGY, members leave.

Kafka 4.4 (and kafkito) hold a new group's first target back for group.streams.initial.rebalance.delay.ms
(3 s) and later ones for group.streams.assignment.interval.ms (1 s), and Kafka creates the internal topics
and learns of them asynchronously (each may bump the group epoch on its own). So what is compared is what
does not depend on timing: the first answers whole, the settled splits, the refusals and leaves; members
heartbeat unrecorded, as clients do at their interval, until the group is reconciled.
"""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create

FIND_COORDINATOR, METADATA, HEARTBEAT, DESCRIBE = 10, 3, 88, 89
PARTITIONS = 2


def topology(app: str, source: str, epoch: int = 1, store: str = "counts") -> dict[str, Any]:
    """Subtopology 0 reads `source` and writes the repartition topic; 1 reads it into a store."""
    repartition, changelog = f"{app}-{store}-repartition", f"{app}-{store}-changelog"
    return dict(epoch=epoch, subtopologies=[
        dict(subtopology_id="0", source_topics=[source], source_topic_regex=[], state_changelog_topics=[],
             repartition_sink_topics=[repartition], repartition_source_topics=[], copartition_groups=[]),
        dict(subtopology_id="1", source_topics=[], source_topic_regex=[],
             state_changelog_topics=[dict(name=changelog, partitions=0, replication_factor=0,
                                          topic_configs=[dict(key="cleanup.policy", value="compact")])],
             repartition_sink_topics=[],
             repartition_source_topics=[dict(name=repartition, partitions=0, replication_factor=0, topic_configs=[])],
             copartition_groups=[]),
    ])  # fmt: skip


@dataclass(slots=True)
class Member:
    """A streams member: its id (the client generates it), epoch and the active tasks it owns."""

    id: str
    epoch: int = 0
    owns: list[dict[str, Any]] = field(default_factory=list)

    def fields(self, group: str, topo: dict[str, Any] | None = None) -> dict[str, Any]:
        joining = self.epoch == 0
        return dict(group_id=group, member_id=self.id, member_epoch=self.epoch, endpoint_information_epoch=0,
                    instance_id=None, rack_id=None, rebalance_timeout_ms=30_000 if joining else -1,
                    topology=topo if joining else None, active_tasks=self.owns, standby_tasks=[], warmup_tasks=[],
                    process_id=f"process-{self.id[-4:]}" if joining else None, user_endpoint=None,
                    client_tags=[] if joining else None, task_offsets=[] if joining else None,
                    task_end_offsets=[] if joining else None, shutdown_application=False)  # fmt: skip

    def take(self, response: Any) -> None:
        """What an answer gives: the epoch, and the active tasks when it carries them (a member gives up
        at once what it is no longer given)."""
        if response is None or response.error_code != 0:
            return
        self.epoch = response.member_epoch
        if response.active_tasks is not None:
            self.owns = [{"subtopology_id": t.subtopology_id, "partitions": sorted(t.partitions)}
                         for t in response.active_tasks]  # fmt: skip

    def tasks(self) -> list[str]:
        return sorted(f"{t['subtopology_id']}_{p}" for t in self.owns for p in t["partitions"])


def describe(side: Side, group: str) -> Any:
    r = side.quietly(
        DESCRIBE,
        1,
        group_ids=[group],
        include_authorized_operations=False,
        include_topology_description=False,
    )
    return None if r is None else r.groups[0]


def reconciled(side: Side, group: str, members: list[Member]) -> bool:
    """One unrecorded heartbeat of each member; whether the group is Stable, every member at the group's
    epoch and every task owned once."""
    for m in members:
        m.take(side.quietly(HEARTBEAT, 1, **m.fields(group)))
    g = describe(side, group)
    if g is None or g.error_code != 0 or g.group_state != "Stable":
        return False
    owned = sorted(t for m in members for t in m.tasks())
    every = sorted(f"{s}_{p}" for s in "01" for p in range(PARTITIONS))
    return owned == every and all(m.epoch == g.group_epoch for m in members)


def topics_exist(side: Side, names: list[str]) -> bool:
    r = side.quietly(METADATA, 12, topics=[dict(name=n, topic_id=None) for n in names], allow_auto_topic_creation=False,
                     include_cluster_authorized_operations=False, include_topic_authorized_operations=False)  # fmt: skip
    return r is not None and all(t.error_code == 0 for t in r.topics)


def described(side: Side, group: str, label: str) -> None:
    """What Describe says of the settled group that does not depend on timing."""
    g = describe(side, group)
    if g is None:
        side.note(label, None)
        return
    members = sorted(
        ([f"{t.subtopology_id}_{p}" for t in m.assignment.active_tasks for p in t.partitions],
         [f"{t.subtopology_id}_{p}" for t in m.target_assignment.active_tasks for p in t.partitions],
         m.topology_epoch, m.client_id, m.process_id is not None)
        for m in g.members
    )  # fmt: skip
    side.note(label, {"error_code": g.error_code, "state": g.group_state, "assignor": g.assignor_name,
                      "epochs_equal": g.group_epoch == g.assignment_epoch, "members": members,
                      "topology_epoch": None if g.topology is None else g.topology.epoch,
                      "subtopologies": None if g.topology is None else
                      sorted((s.subtopology_id, s.source_topics, s.repartition_sink_topics,
                              [(t.name, t.partitions) for t in s.state_changelog_topics],
                              [(t.name, t.partitions) for t in s.repartition_source_topics])
                             for s in g.topology.subtopologies)})  # fmt: skip


@scenario("sequence")
def streams_group_heartbeats(side: Side) -> None:
    src, g, g0 = side.name("words"), side.name("app"), side.name("app-missing")
    m1, m2 = Member("conformance-streams-1-aaaaaaaaaaaaaa"), Member("conformance-streams-2-bbbbbbbbbbbbbb")
    create(side, src, "the source topic", PARTITIONS)
    side.request(FIND_COORDINATOR, 4, "group", key_type=0, coordinator_keys=[g0, g])
    side.request_settled(HEARTBEAT, 1, "a member of a group whose source topic is missing",
                         **Member("conformance-streams-0-cccccccccccccc").fields(g0, topology(g0, side.name("nothing"))))  # fmt: skip
    # The first member's join, whole: the delay's status and the internal topics the broker creates.
    first = side.request(HEARTBEAT, 1, "m1 joins", **m1.fields(g, topology(g, src)))
    m1.take(first)
    internal = [f"{g}-counts-repartition", f"{g}-counts-changelog"]
    side.wait_for("the internal topics", lambda: topics_exist(side, internal))
    side.wait_for("m1 reconciled", lambda: reconciled(side, g, [m1]))
    side.note("m1 alone", {"m1": m1.tasks()})
    described(side, g, "the group with m1")
    joined = side.quietly(HEARTBEAT, 1, **m2.fields(g, topology(g, src)))
    m2.take(joined)
    side.note("m2 joins", None if joined is None else {"error_code": joined.error_code})
    side.wait_for("m1 and m2 reconciled", lambda: reconciled(side, g, [m1, m2]))
    side.note("two members", {"tasks": sorted([m1.tasks(), m2.tasks()])})
    described(side, g, "the group with m1 and m2")
    # Epoch numbers depend on how many metadata changes the broker saw while creating the internal topics.
    r = side.quietly(HEARTBEAT, 1, **m1.fields(g))
    side.note("m1 at its epoch", None if r is None else
              {"error_code": r.error_code, "status": [(s.status_code, s.status_detail) for s in r.status or []],
               "same epoch": r.member_epoch == m1.epoch, "tasks": r.active_tasks})  # fmt: skip
    future = Member(m1.id, m1.epoch + 5, m1.owns)
    side.request(HEARTBEAT, 1, "m1 with an epoch from the future", **future.fields(g))
    every = [{"subtopology_id": s, "partitions": list(range(PARTITIONS))} for s in "01"]
    side.request(
        HEARTBEAT,
        1,
        "m1 with an older epoch, owning what it was not given",
        **Member(m1.id, m1.epoch - 1, every).fields(g),
    )
    side.request(
        HEARTBEAT, 1, "an unknown member id", **Member("conformance-streams-9-nobodynobodyno", 3).fields(g)
    )
    changed = topology(g, src, store="totals")
    side.request(HEARTBEAT, 1, "a member joining with another topology under the group's epoch",
                 **Member("conformance-streams-3-dddddddddddddd").fields(g, changed))  # fmt: skip
    side.request(HEARTBEAT, 1, "m2 leaves", **Member(m2.id, -1).fields(g))
    side.wait_for("m1 reconciled alone", lambda: reconciled(side, g, [m1]))
    side.note("m2 gone", {"m1": m1.tasks()})
    m3 = Member("conformance-streams-4-eeeeeeeeeeeeee")
    m3.take(
        side.request(
            HEARTBEAT, 1, "a member joining with topology epoch 2", **m3.fields(g, topology(g, src, epoch=2))
        )
    )
    r = side.quietly(HEARTBEAT, 1, **m1.fields(g))
    side.note("m1 behind the group's topology epoch", None if r is None else
              {"error_code": r.error_code, "status": sorted((s.status_code, s.status_detail) for s in r.status or [])})  # fmt: skip
    side.request(HEARTBEAT, 1, "m3 leaves", **Member(m3.id, -1).fields(g))
    side.request(HEARTBEAT, 1, "m1 leaves", **Member(m1.id, -1).fields(g))
    g_after = describe(side, g)
    side.note(
        "after all left",
        None if g_after is None else {"state": g_after.group_state, "members": len(g_after.members)},
    )
    side.request(HEARTBEAT, 1, "a heartbeat of a member of an empty group", **Member(m1.id, 4).fields(g))
    side.request(
        HEARTBEAT, 1, "a heartbeat of a group nobody knows", **Member(m1.id, 4).fields(side.name("nobody"))
    )
    side.request(DESCRIBE, 1, "a group nobody knows", group_ids=[side.name("nobody")], include_authorized_operations=False,
                 include_topology_description=False)  # fmt: skip
