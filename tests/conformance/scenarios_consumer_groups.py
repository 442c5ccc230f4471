"""KIP-848 consumer groups through ConsumerGroupHeartbeat: a member joins and is given every partition,
a second member makes the first revoke one, both reconcile; a member epoch from the future, a stale
one and an unknown member id are refused; members leave.

Kafka 4.4 (and kafkito) compute a group's target assignment at most once per
group.consumer.assignment.interval.ms (1000 ms), on the first heartbeat after it has passed, so an
answer right after a later change depends on timing: members heartbeat (unrecorded) until the group
is reconciled, as clients do at their interval, and what is compared is the first member's join (a
new group's first target is computed at once, at epoch 2: a new group is at epoch 1), the settled
split and the answers that do not depend on timing.
"""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create

FIND_COORDINATOR, HEARTBEAT, DESCRIBE = 10, 68, 69
PARTITIONS = 2
NOBODY = "conformance-nobody-ccccccccccccccccccccc"


@dataclass(slots=True)
class Member:
    """A member id a v1 client generates itself (KIP-1082), its epoch and what it owns."""

    id: str
    epoch: int = 0
    owns: list[dict[str, Any]] = field(default_factory=list)

    def fields(self, group: str, topics: list[str] | None = None) -> dict[str, Any]:
        return dict(group_id=group, member_id=self.id, member_epoch=self.epoch, instance_id=None, rack_id=None,
                    rebalance_timeout_ms=30_000 if self.epoch == 0 else -1, subscribed_topic_names=topics,
                    subscribed_topic_regex=None, server_assignor=None, topic_partitions=self.owns)  # fmt: skip

    def take(self, response: Any) -> None:
        """What an answer gives: the member's epoch, and its assignment when it carries one."""
        if response is None or response.error_code != 0:
            return
        self.epoch = response.member_epoch
        if response.assignment is not None:
            self.owns = [{"topic_id": t.topic_id, "partitions": sorted(t.partitions)}
                         for t in response.assignment.topic_partitions]  # fmt: skip

    def partitions(self) -> list[int]:
        return sorted(p for t in self.owns for p in t["partitions"])


def join(side: Side, group: str, member: Member, topics: list[str], label: str, first: bool = False) -> None:
    """A member's first heartbeat. A later member's epoch and assignment depend on when the group last
    assigned (within the assignment interval it is given none yet), so only the error and the interval
    are compared; the `first` member's are compared whole (its partitions by number)."""
    r = side.quietly(HEARTBEAT, 1, **member.fields(group, topics))
    member.take(r)
    answer = (
        None if r is None else {"error_code": r.error_code, "heartbeat_interval_ms": r.heartbeat_interval_ms}
    )
    if first and r is not None:
        answer |= {"member_epoch": r.member_epoch, "partitions": member.partitions()}
    side.note(f"ConsumerGroupHeartbeat v1 {label}", answer)


def reconciled(side: Side, group: str, members: list[Member]) -> bool:
    """One unrecorded heartbeat of each member; whether the group is Stable, its target assignment
    computed for its epoch, every member at that epoch and every partition owned (Kafka may answer a
    member with an empty assignment until its next assignment run)."""
    for m in members:
        m.take(side.quietly(HEARTBEAT, 1, **m.fields(group)))
    r = side.quietly(DESCRIBE, 1, group_ids=[group], include_authorized_operations=False)
    if r is None or r.groups[0].error_code != 0:
        return False
    g = r.groups[0]
    settled = g.group_state == "Stable" and g.assignment_epoch == g.group_epoch
    every = sorted(p for m in members for p in m.partitions()) == list(range(PARTITIONS))
    return settled and every and all(m.epoch == g.group_epoch for m in members)


@scenario("sequence")
def consumer_group_heartbeats(side: Side) -> None:
    t, g = side.name(), side.name("group")
    m1, m2 = (
        Member("conformance-member-1-aaaaaaaaaaaaaaaaa"),
        Member("conformance-member-2-bbbbbbbbbbbbbbbbb"),
    )
    create(side, t, "two partitions", PARTITIONS)
    side.find_coordinator(0, g, "group")
    join(side, g, m1, [t], "m1 joins", first=True)
    side.wait_for("m1 reconciled", lambda: reconciled(side, g, [m1]))
    side.note("m1 alone", {"m1": m1.partitions()})
    join(side, g, m2, [t], "m2 joins")
    side.wait_for("m1 and m2 reconciled", lambda: reconciled(side, g, [m1, m2]))
    side.note("two members", {"partitions": sorted([m1.partitions(), m2.partitions()])})
    side.request(HEARTBEAT, 1, "m1 at its epoch", **m1.fields(g))
    future = Member(m1.id, m1.epoch + 5, m1.owns)
    side.request(HEARTBEAT, 1, "m1 with an epoch from the future", **future.fields(g))
    every = [{"topic_id": o["topic_id"], "partitions": [0, 1]} for o in m1.owns]
    stale = Member(m1.id, m1.epoch - 1, every)
    side.request(HEARTBEAT, 1, "m1 with an older epoch, owning what it was not given", **stale.fields(g))
    side.request(HEARTBEAT, 1, "an unknown member id", **Member(NOBODY, 3).fields(g))
    side.request(HEARTBEAT, 1, "m2 leaves", **Member(m2.id, -1).fields(g))
    side.wait_for("m1 reconciled alone", lambda: reconciled(side, g, [m1]))
    side.note("m2 gone", {"m1": m1.partitions()})
    side.request(HEARTBEAT, 1, "m1 leaves", **Member(m1.id, -1).fields(g))
    r = side.quietly(DESCRIBE, 1, group_ids=[g], include_authorized_operations=False)
    side.note("after both left", {"state": None if r is None else r.groups[0].group_state,
                                  "members": None if r is None else len(r.groups[0].members)})  # fmt: skip
