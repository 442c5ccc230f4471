"""confluent-kafka consumers with `cooperative-sticky` rebalance incrementally."""

from __future__ import annotations

from tests.coordinator.clients import (
    ConfluentMember,
    create_topic,
    group_state,
    partitions_covered,
    wait_for_members,
)
from tests.support.brokers import ThreadBroker

PARTITIONS = 6
COOPERATIVE = {"partition.assignment.strategy": "cooperative-sticky"}


def test_cooperative_sticky_moves_only_the_partitions_it_must(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "coop", PARTITIONS)
    members = [
        ConfluentMember(broker.bootstrap, "coop", "coop-group", f"c{i}", **COOPERATIVE) for i in range(2)
    ]
    try:

        def settled() -> bool:
            state, _, ids = group_state(broker, "coop-group")
            return (
                state == "Stable" and len(ids) == len(members) and partitions_covered(members, PARTITIONS)()
            )

        wait_for_members(members, settled, "two cooperative members")
        before = [m.assignment() for m in members]
        assert sorted(len(a) for a in before) == [3, 3]
        marks = [len(m.callbacks.events) for m in members]

        members.append(ConfluentMember(broker.bootstrap, "coop", "coop-group", "c2", **COOPERATIVE))
        wait_for_members(
            members, lambda: settled() and all(len(m.assignment()) == 2 for m in members), "three"
        )
        assert group_state(broker, "coop-group")[2]
        for member, owned_before, mark in zip(members, before, marks, strict=False):
            revoked = [p for kind, ps in member.callbacks.events[mark:] if kind == "revoke" for p in ps]
            # Incremental: each old member gives up one partition and keeps the rest throughout.
            assert len(revoked) == 1 and set(revoked) < owned_before
            assert member.assignment() == owned_before - set(revoked)
        assert all(kind == "assign" for kind, _ in members[2].callbacks.events)
    finally:
        for m in members:
            m.close()
