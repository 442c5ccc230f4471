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
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.cluster.topology import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, Topology
from kafkito.broker.context import RequestContext
from kafkito.broker.listeners import Listener, SecurityProtocol, bound_socket, listeners_of
from kafkito.broker.services import Cluster, Services

if TYPE_CHECKING:
    from ssl import SSLContext

    from kafkito.broker.app import Broker
    from kafkito.broker.auth.listener_security import ListenerSecurity

log = structlog.get_logger("kafkito.cluster")

PLACEMENT_FILE = "cluster-placement.json"  # each topic's replicas, kept across restarts
_INTERNAL_REPLICATION = 3  # offsets.topic.replication.factor's default in Kafka


def _warn_if_open(broker: Broker, listener: Listener) -> None:
    from kafkito.broker.listeners import authenticates, open_to_network

    if not authenticates(listener, broker.config) and open_to_network(listener):
        log.warning(
            "listener.unauthenticated", listener=listener.name, host=listener.host,
            hint="bound beyond loopback with no authentication: anyone who can reach it can use it",
        )  # fmt: skip


def _listener_security(broker: Broker, listener: Listener) -> ListenerSecurity | None:
    """What a listener needs to authenticate (None for PLAINTEXT); warns when it is open unauthenticated."""
    _warn_if_open(broker, listener)
    if listener.protocol is SecurityProtocol.PLAINTEXT:
        return None
    from kafkito.broker.auth.listener_security import ListenerSecurity

    return ListenerSecurity(listener, broker.config, broker.security)


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


async def _create_server(
    factory: Callable[[], asyncio.BaseProtocol], host: str, port: int, ssl: SSLContext | None
) -> asyncio.base_events.Server:
    """The loop's `create_server(host, port, reuse_address=True)`; an address literal is bound here and
    passed as `sock=`, the same socket without the loop's name resolution (see `bound_socket`)."""
    loop = asyncio.get_running_loop()
    sock = bound_socket(host, port)
    if sock is None:
        return await loop.create_server(factory, host, port, ssl=ssl, reuse_address=True)
    try:
        return await loop.create_server(factory, sock=sock, ssl=ssl)
    except BaseException:
        sock.close()
        raise


class Nodes:
    """Every node's identity, request context and listener."""

    def __init__(self, broker: Broker, count: int, ports: list[int] | None = None) -> None:
        self._broker = broker
        self.count = count
        self._ports = ports  # fixed ports (a restart keeps them), else from `port`
        self.clusters: dict[int, Cluster] = {}
        self.contexts: dict[int, type[RequestContext]] = {}
        self.servers: dict[int, asyncio.base_events.Server] = {}  # the first listener's
        self.bound: dict[int, int] = {}  # node id -> bound port, kept while the node is stopped
        # Further listeners (`listeners` naming several): their servers, bound ports and contexts.
        self.listeners: list[Listener] = []
        self.security: list[ListenerSecurity | None] = []  # per listener; None for PLAINTEXT
        self.more_servers: dict[int, list[asyncio.base_events.Server]] = {}
        self.listener_bound: dict[tuple[int, str], int] = {}
        self.listener_contexts: dict[tuple[int, str], type[RequestContext]] = {}

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
            self._bind_listeners(cluster)
        return self.contexts[first.node_id]

    def _bind_listeners(self, cluster: Cluster) -> None:
        """With `listeners` set: one context per listener (the listener is what Metadata advertises),
        and each listener's TLS and SASL settings, built once (a bad one fails the start)."""
        config = self._broker.config
        node_id = cluster.node_id
        if not config.listeners:
            if node_id == config.node_id:
                _warn_if_open(self._broker, listeners_of(config)[0])
            return
        if not self.listeners:
            self.listeners = listeners_of(config)
            self.security = [_listener_security(self._broker, listener) for listener in self.listeners]
        cluster.listener_port = lambda name: self.listener_bound.get((node_id, name))
        context = self.contexts[node_id]
        for listener in self.listeners:
            self.listener_contexts[node_id, listener.name] = context.for_listener(listener.name)

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
        first = self.listeners[0] if self.listeners else None
        security = self.security[0] if self.security else None
        if first is not None:
            context = self.listener_contexts[node_id, first.name]
        server = await _create_server(
            lambda: KafkaConnection(broker, context, node_id, security),
            broker.config.host,
            self.port_for(node_id),
            None if security is None else security.ssl_context,
        )
        self.servers[node_id] = server
        sock = server.sockets[0].getsockname()
        self.bound[node_id] = sock[1]
        if first is not None:
            self.listener_bound[node_id, first.name] = sock[1]
            await self._open_more(node_id)
        return sock[0], sock[1]

    async def _open_more(self, node_id: int) -> None:
        """The node's further listeners (on the ports they had, if they had them)."""
        from kafkito.broker.server import KafkaConnection

        broker = self._broker
        index = node_id - broker.config.node_id
        servers = self.more_servers[node_id] = []
        for listener, security in zip(self.listeners[1:], self.security[1:], strict=True):
            context = self.listener_contexts[node_id, listener.name]
            port = self.listener_bound.get((node_id, listener.name)) or (
                listener.port + index if listener.port else 0
            )
            server = await _create_server(
                partial(KafkaConnection, broker, context, node_id, security),
                listener.host,
                port,
                None if security is None else security.ssl_context,
            )
            servers.append(server)
            host, bound = server.sockets[0].getsockname()[:2]
            self.listener_bound[node_id, listener.name] = bound
            log.info("listener.started", listener=listener.name, protocol=listener.protocol.value,
                     host=host, port=bound, node_id=node_id)  # fmt: skip

    def close(self, node_id: int, *, kill: bool = True) -> None:
        """Stop the node's listener and cut its connections."""
        server = self.servers.pop(node_id, None)
        if server is not None:
            server.close()
        for more in self.more_servers.pop(node_id, []):
            more.close()
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
