"""The cluster's nodes and a partition's replicas as the admin handlers see them, and Kafka's checks of
a manual replica assignment (CreateTopics, CreatePartitions, AlterPartitionReassignments).

One home for "which nodes exist, which are live" and "who hosts and leads this partition": on a
one-node cluster the node is every partition's only replica, its leader and preferred leader; a
multi-node cluster (`broker/cluster/`) answers from its `Topology`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkito.broker.context import RequestContext


def registered_nodes(ctx: RequestContext) -> frozenset[int]:
    """The ids of every node of the cluster, live or stopped."""
    return frozenset(ctx.cluster.topology.node_ids)


def live_nodes(ctx: RequestContext) -> frozenset[int]:
    """The ids of the registered, unfenced nodes."""
    return frozenset(ctx.cluster.live_nodes())


def partition_replicas(ctx: RequestContext, topic: str, partition: int) -> list[int]:
    """The replica list of one partition, preferred leader first."""
    topology = ctx.cluster.topology
    state = None if topology.single else topology.partition(topic, partition)
    return [ctx.cluster.node_id] if state is None else list(state.replicas)


def partition_isr(ctx: RequestContext, topic: str, partition: int) -> list[int]:
    topology = ctx.cluster.topology
    state = None if topology.single else topology.partition(topic, partition)
    return [ctx.cluster.node_id] if state is None else list(state.isr)


def partition_leader(ctx: RequestContext, topic: str, partition: int) -> int:
    """The partition's leader (-1: none)."""
    topology = ctx.cluster.topology
    leader = None if topology.single else topology.leader_of(topic, partition)
    return ctx.cluster.node_id if leader is None else leader


def elect(ctx: RequestContext, topic: str, partition: int, node: int) -> None:
    """Make `node`, one of the partition's live replicas, its leader (an ElectLeaders election)."""
    topology = ctx.cluster.topology
    state = topology.partition(topic, partition)
    if state is not None:
        topology._set_leader(topic, partition, state, node)


def assignment_error(
    replicas: Sequence[int], ctx: RequestContext, expected_rf: int | None, partition: int
) -> str | None:
    """Why Kafka's controller refuses one partition's manual assignment (INVALID_REPLICA_ASSIGNMENT), or None.

    `expected_rf` is the replica count the other partitions of the request (or topic) have.
    """
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    registered = registered_nodes(ctx)
    seen: set[int] = set()
    for broker in sorted(replicas):
        if broker not in registered:
            return (
                f"The manual partition assignment includes broker {broker}, but no such broker is registered."
            )
        if broker in seen:
            return f"The manual partition assignment includes the broker {broker} more than once."
        seen.add(broker)
    if expected_rf is not None and len(replicas) != expected_rf:
        return (
            f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this "
            f"is not consistent with previous partitions, which have {expected_rf} replica(s)."
        )
    if not seen & live_nodes(ctx):
        return (
            f"All brokers specified in the manual partition assignment for partition {partition} "
            "are fenced or in controlled shutdown."
        )
    return None


def place(ctx: RequestContext, topic: str, first: int, assignments: Sequence[Sequence[int]]) -> None:
    """Record a manual assignment of partitions `first`.. of `topic` (multi-node clusters; one node has
    nothing to record): replicas as given, the live ones in sync, the first live one leading."""
    topology = ctx.cluster.topology
    if topology.single:
        return
    for offset, replicas in enumerate(assignments):
        reassign(ctx, topic, first + offset, replicas, keep_leader=False)


def reassign(
    ctx: RequestContext, topic: str, partition: int, replicas: Sequence[int], *, keep_leader: bool = True
) -> None:
    """Move a partition to `replicas` at once (every node of this in-process cluster reads the same log,
    so the new replicas are caught up the moment they are named). The leader stays if it is kept
    (`keep_leader`), else the first live replica leads."""
    topology = ctx.cluster.topology
    state = None if topology.single else topology.partition(topic, partition)
    if state is None:
        return
    live = topology.live
    state.replicas = list(replicas)
    state.isr = [r for r in replicas if r in live] or [replicas[0]]
    kept = keep_leader and state.leader in state.isr and state.leader in live
    leader = state.leader if kept else None
    if leader is None:
        leader = next((r for r in state.isr if r in live), -1)
    topology._set_leader(topic, partition, state, leader)
    topology._changed()  # the placement is saved, so a restart keeps it
