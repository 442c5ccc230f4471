"""A static member (group.instance.id) restarted within its session timeout gets its partitions back
with no rebalance of the others."""

from __future__ import annotations

from tests.coordinator.clients import (
    ConfluentMember,
    create_topic,
    group_state,
    partitions_covered,
    wait_for_members,
)
from tests.support.brokers import ThreadBroker

PARTITIONS = 4


def static(broker: ThreadBroker, instance: str) -> ConfluentMember:
    return ConfluentMember(
        broker.bootstrap, "static", "static-group", instance,
        **{"group.instance.id": instance, "session.timeout.ms": 30_000},
    )  # fmt: skip


def test_static_member_restart_keeps_its_assignment_without_rebalance(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "static", PARTITIONS)
    first, second = static(broker, "inst-1"), static(broker, "inst-2")
    restarted: ConfluentMember | None = None
    try:

        def settled() -> bool:
            state, _, ids = group_state(broker, "static-group")
            return state == "Stable" and len(ids) == 2 and partitions_covered([first, second], PARTITIONS)()

        wait_for_members([first, second], settled, "two static members")
        _, generation, ids = group_state(broker, "static-group")
        second_partitions = second.assignment()
        first_events = list(first.callbacks.events)

        second.close()  # a static member does not send LeaveGroup
        state, _, still = group_state(broker, "static-group")
        assert (state, sorted(still)) == ("Stable", sorted(ids))

        restarted = static(broker, "inst-2")
        wait_for_members(
            [first, restarted], lambda: restarted.assignment() == second_partitions, "the restart"
        )
        # A rebalance, had the restart caused one, would have started at its JoinGroup, already answered.
        state, new_generation, new_ids = group_state(broker, "static-group")
        assert (state, new_generation) == ("Stable", generation)
        assert len(new_ids) == 2 and set(ids) - set(new_ids) == {
            next(m for m in ids if m.startswith("inst-2-"))
        }
        assert first.callbacks.events == first_events  # the other member saw nothing
    finally:
        first.close()
        if restarted is not None:
            restarted.close()
