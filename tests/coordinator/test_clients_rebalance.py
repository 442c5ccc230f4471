"""Real kafka-python consumers over TCP: three share a topic, a fourth joins, one leaves."""

from __future__ import annotations

from tests.coordinator.clients import (
    KafkaPythonMember,
    Member,
    create_topic,
    group_state,
    partitions_covered,
    wait_for_members,
)
from tests.support.brokers import ThreadBroker

PARTITIONS = 6


def settled(broker: ThreadBroker, group: str, members: list[Member]) -> bool:
    state, _, ids = group_state(broker, group)
    return state == "Stable" and len(ids) == len(members) and partitions_covered(members, PARTITIONS)()


def test_three_consumers_rebalance_when_a_fourth_joins_and_when_one_leaves(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "rb", PARTITIONS)
    members: list[Member] = [
        KafkaPythonMember(broker.bootstrap, "rb", "rb-group", f"kp{i}") for i in range(3)
    ]
    try:
        wait_for_members(members, lambda: settled(broker, "rb-group", members), "three members")
        assert sorted(len(m.assignment()) for m in members) == [2, 2, 2]
        _, first_generation, _ = group_state(broker, "rb-group")

        members.append(KafkaPythonMember(broker.bootstrap, "rb", "rb-group", "kp3"))
        wait_for_members(members, lambda: settled(broker, "rb-group", members), "four members")
        assert sorted(len(m.assignment()) for m in members) == [1, 1, 2, 2]
        _, second_generation, _ = group_state(broker, "rb-group")
        assert second_generation > first_generation

        leaving = members.pop(0)
        leaving.close()  # sends LeaveGroup
        wait_for_members(members, lambda: settled(broker, "rb-group", members), "three members again")
        assert sorted(len(m.assignment()) for m in members) == [2, 2, 2]
        _, third_generation, ids = group_state(broker, "rb-group")
        assert third_generation > second_generation and len(ids) == 3
    finally:
        for m in members:
            m.close()
