"""The nodes of a broker: one Kafka listener each, and the operations that stop and start them.

A one-node broker (the default) has one listener on `port`. A cluster of N nodes listens on `port`,
`port + 1`, ... (each on a free port of its own when `port` is 0), every node with its own node id,
`Cluster` identity and request context, over the one set of logs and coordinators. Stopping a node
closes its listener and its connections and moves its leaderships (`Topology.stop`); starting it
opens the listener again on the same port.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.cluster.topology import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, Topology
from kafkito.broker.context import RequestContext
from kafkito.broker.services import Cluster, Services

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

log = structlog.get_logger("kafkito.cluster")

PLACEMENT_FILE = "cluster-placement.json"  # each topic's replicas, kept across restarts
_INTERNAL_REPLICATION = 3  # offsets.topic.replication.factor's default in Kafka


def build_topology(broker: Broker, count: int) -> Topology:
    """The topology of `count` nodes over the broker's logs (node ids from `node.id` up)."""
    config = broker.config
    logs = broker.logs

    def partitions_of(topic: str) -> int | None:
        info = logs.topic(topic)
        return None if info is None else info.partitions

    internal = {
        OFFSETS_TOPIC: (lambda: broker.offsets.num_partitions, _INTERNAL_REPLICATION),
        TRANSACTION_STATE_TOPIC: (
            lambda: config.transaction_state_log_num_partitions,
            config.transaction_state_log_replication_factor,
        ),
    }
    ids = [config.node_id + k for k in range(count)]
    path = config.data_dir / PLACEMENT_FILE
    topology = Topology(
        ids,
        partitions_of,
        lambda: config.default_replication_factor,
        internal,
        placements=_load_placements(path),
        save=lambda placements: _save_placements(path, placements),
    )
    logs.registered_brokers = count
    logs.on_topic.append(topology.topic_changed)
    return topology


def _load_placements(path: Path) -> dict[str, list[list[int]]]:
    """The replicas saved by the last run (nothing when the file is missing or unreadable)."""
    try:
        loaded = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("cluster.placement_unreadable", path=str(path), error=str(exc))
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(t): [[int(n) for n in r] for r in parts] for t, parts in loaded.items()}


def _save_placements(path: Path, placements: dict[str, list[list[int]]]) -> None:
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(placements, sort_keys=True))
        tmp.replace(path)
    except OSError as exc:  # the placement is a convenience across restarts: never fail a request for it
        log.warning("cluster.placement_not_saved", path=str(path), error=str(exc))


class Nodes:
    """Every node's identity, request context and listener."""

    def __init__(self, broker: Broker, count: int, ports: list[int] | None = None) -> None:
        self._broker = broker
        self.count = count
        self._ports = ports  # fixed ports (a restart keeps them), else from `port`
        self.clusters: dict[int, Cluster] = {}
        self.contexts: dict[int, type[RequestContext]] = {}
        self.servers: dict[int, asyncio.base_events.Server] = {}
        self.bound: dict[int, int] = {}  # node id -> bound port, kept while the node is stopped

    @property
    def ids(self) -> list[int]:
        return list(self.clusters)

    def build(self, services: Services, topology: Topology | None) -> type[RequestContext]:
        """One `Cluster` and bound request context per node; returns the first node's context type."""
        broker = self._broker
        first = services.cluster
        peers: dict[int, Cluster] = {}
        for k in range(self.count):
            if k == 0:
                cluster = first
            else:
                cluster = Cluster(broker.config, broker.cluster_id, self._port_of(k), topology, k)
            if topology is not None:
                cluster.topology = topology
            cluster.peers = peers
            peers[cluster.node_id] = cluster
            self.clusters[cluster.node_id] = cluster
            node_services = services if k == 0 else replace(services, cluster=cluster)
            self.contexts[cluster.node_id] = RequestContext.bind(node_services)
        return self.contexts[first.node_id]

    def _port_of(self, index: int) -> Callable[[], int | None]:
        node_id = self._broker.config.node_id + index
        return lambda: self.bound.get(node_id)

    def port_for(self, node_id: int) -> int:
        index = node_id - self._broker.config.node_id
        if node_id in self.bound:
            return self.bound[node_id]
        if self._ports is not None:
            return self._ports[index]
        port = self._broker.config.port
        return port + index if port else 0

    async def open(self, node_id: int) -> tuple[str, int]:
        """Start the node's listener (on the port it had, if it had one); returns its bound address."""
        from kafkito.broker.server import KafkaConnection

        broker = self._broker
        context = self.contexts[node_id]
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: KafkaConnection(broker, context, node_id),
            broker.config.host,
            self.port_for(node_id),
            reuse_address=True,
        )
        self.servers[node_id] = server
        sock = server.sockets[0].getsockname()
        self.bound[node_id] = sock[1]
        return sock[0], sock[1]

    def close(self, node_id: int, *, kill: bool = True) -> None:
        """Stop the node's listener and cut its connections."""
        server = self.servers.pop(node_id, None)
        if server is not None:
            server.close()
        if kill:
            for conn in list(self._broker.connections):
                if getattr(conn, "node_id", None) == node_id:
                    conn.kill()

    def close_listeners(self) -> None:
        for node_id in list(self.servers):
            self.close(node_id, kill=False)

    def describe(self) -> list[dict[str, Any]]:
        """Every node: id, advertised host and port, and whether it serves now."""
        out = []
        for node_id, cluster in self.clusters.items():
            host, port = cluster.advertised
            out.append({"node_id": node_id, "host": host, "port": port, "live": node_id in self.servers})
        return out
