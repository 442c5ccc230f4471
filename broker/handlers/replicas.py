"""The cluster's nodes and a partition's replicas as the admin handlers see them, and Kafka's checks of
a manual replica assignment (CreateTopics, CreatePartitions, AlterPartitionReassignments).

One home for "which nodes are live" and "who hosts this partition": on a one-node cluster every
partition has this node as its only replica, leader and preferred leader.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkito.broker.context import RequestContext


def live_nodes(ctx: RequestContext) -> frozenset[int]:
    """The ids of the registered, unfenced nodes."""
    return frozenset((ctx.cluster.node_id,))


def partition_replicas(ctx: RequestContext, topic: str, partition: int) -> list[int]:
    """The replica list of one partition, preferred leader first."""
    return [ctx.cluster.node_id]


def partition_leader(ctx: RequestContext, topic: str, partition: int) -> int:
    return ctx.cluster.node_id


def assignment_error(replicas: Sequence[int], live: frozenset[int], expected_rf: int | None) -> str | None:
    """Why Kafka's controller refuses one partition's manual assignment (INVALID_REPLICA_ASSIGNMENT), or None.

    `expected_rf` is the replica count the other partitions of the request (or topic) have.
    """
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    seen: set[int] = set()
    for broker in sorted(replicas):
        if broker not in live:
            return (
                f"The manual partition assignment includes broker {broker}, "
                "but no such broker is registered."
            )
        if broker in seen:
            return f"The manual partition assignment includes the broker {broker} more than once."
        seen.add(broker)
    if expected_rf is not None and len(replicas) != expected_rf:
        return (
            f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this "
            f"is not consistent with previous partitions, which have {expected_rf} replica(s)."
        )
    return None
