"""The topology operations a test may perform on a running cluster (through `Steering`): stop and
start a node, move a partition's leader or a group's coordinator, and describe it all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.cluster.topology import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, Topology

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

log = structlog.get_logger("kafkito.cluster")


def _topology(broker: Broker) -> Topology:
    topology = broker.topology
    if topology is None:
        raise ValueError("this broker runs one node: start it with nodes=N (kafkito serve --nodes N)")
    return topology


def stop_node(broker: Broker, node_id: int) -> None:
    """Close the node's listener and connections; its partitions elect other leaders (or none)."""
    topology = _topology(broker)
    topology._require(node_id)
    broker.nodes.close(node_id)
    topology.stop(node_id)
    broker.logs.registered_brokers = len(topology.live)
    log.info("node.stopped", node_id=node_id)


async def start_node(broker: Broker, node_id: int) -> None:
    """Open the node's listener again (same port); it rejoins the ISRs and leads where preferred."""
    topology = _topology(broker)
    topology._require(node_id)
    if node_id not in broker.nodes.servers:
        await broker.nodes.open(node_id)
    topology.start(node_id)
    broker.logs.registered_brokers = len(topology.live)
    log.info("node.started", node_id=node_id)


def move_leader(broker: Broker, topic: str, partition: int, node_id: int) -> dict[str, Any]:
    """Make `node_id` the partition's leader; returns the partition's new state."""
    state = _topology(broker).move_leader(topic, partition, node_id)
    return {"topic": topic, "partition": partition, **state.as_dict()}


def move_coordinator(broker: Broker, key: str, node_id: int, *, transaction: bool = False) -> dict[str, Any]:
    """Move a group's coordinator (a transactional id's, with `transaction`) to `node_id`: the leader of
    its `__consumer_offsets` (`__transaction_state`) partition moves, and with it every group (id) that
    partition holds, as in Kafka."""
    topology = _topology(broker)
    if transaction:
        topic, partition = TRANSACTION_STATE_TOPIC, topology.transaction_partition(key)
    else:
        topic, partition = OFFSETS_TOPIC, topology.group_partition(key)
    return move_leader(broker, topic, partition, node_id)


def coordinator(broker: Broker, key: str, *, transaction: bool = False) -> int:
    """The node coordinating a group (a transactional id, with `transaction`); -1 for none."""
    topology = broker.topology
    if topology is None:
        return broker.config.node_id
    return topology.transaction_coordinator_of(key) if transaction else topology.group_coordinator_of(key)


def describe(broker: Broker, *, internal: bool = False) -> dict[str, Any]:
    """Cluster id, controller, nodes (with `live`) and every partition's leader, replicas and ISR."""
    cluster = broker.services.cluster
    topics: dict[str, list[dict[str, Any]]] = {}
    for info in broker.logs.topics():
        if not internal and info.name in (OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC):
            continue
        if broker.topology is None:
            node = cluster.node_id
            topics[info.name] = [{"leader": node, "replicas": [node], "isr": [node]}] * info.partitions
        else:
            topics[info.name] = [state.as_dict() for state in broker.topology.partitions(info.name)]
    return {
        "cluster_id": cluster.cluster_id,
        "controller_id": cluster.controller_id,
        "nodes": broker.nodes.describe(),
        "topics": topics,
    }
