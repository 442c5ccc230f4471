"""A group mixing kafka-python and confluent-kafka consumers on the `range` assignor."""

from __future__ import annotations

from collections.abc import Callable

from tests.coordinator.clients import (
    ConfluentMember,
    KafkaPythonMember,
    Member,
    create_topic,
    group_state,
    partitions_covered,
    wait_for_members,
)
from tests.support.brokers import ThreadBroker

PARTITIONS = 8


def test_kafka_python_and_confluent_consumers_share_a_topic_with_range(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    broker = broker_factory()  # Kafka's default initial rebalance delay of 3 s
    create_topic(broker.bootstrap, "mixed", PARTITIONS)
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    members: list[Member] = []
    try:
        for i in range(2):
            members.append(
                KafkaPythonMember(
                    broker.bootstrap,
                    "mixed",
                    "mixed-group",
                    f"kp{i}",
                    partition_assignment_strategy=[RangePartitionAssignor],
                )
            )
            members.append(
                ConfluentMember(
                    broker.bootstrap,
                    "mixed",
                    "mixed-group",
                    f"ck{i}",
                    **{"partition.assignment.strategy": "range"},
                )
            )

        def settled() -> bool:
            state, _, ids = group_state(broker, "mixed-group")
            return state == "Stable" and len(ids) == 4 and partitions_covered(members, PARTITIONS)()

        wait_for_members(members, settled, "a mixed group of four")
        assert sorted(len(m.assignment()) for m in members) == [2, 2, 2, 2]
        assert (
            broker.call(lambda: broker.broker.coordinator.get_group("mixed-group").protocol_name) == "range"
        )  # type: ignore[union-attr]
    finally:
        for m in members:
            m.close()
