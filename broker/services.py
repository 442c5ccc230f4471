"""The narrow services a request handler sees, built once by the Broker (never per request).

A handler reaches the broker only through these: the cluster's identity, the topics and their
partition logs, parked fetches, the broker's configuration, producer ids, the group coordinator
and the transaction coordinator.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import structlog

from kafkito.broker.broker_configs import BrokerConfigs as BrokerConfigs  # re-exported: handlers see it here
from kafkito.broker.config import Config
from kafkito.broker.coordinator import GroupCoordinator
from kafkito.broker.coordinator.consumer.topics import TopicInfo as GroupTopic
from kafkito.broker.fetch_wait import DelayedFetch
from kafkito.broker.listeners import Listener, listeners_of
from kafkito.broker.log.config import ConfigEntry
from kafkito.broker.log.manager import LogManager, TopicInfo
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.log.storage import LogDirHealth
from kafkito.broker.producer_ids import ProducerIdManager
from kafkito.purgatory import Purgatory

if TYPE_CHECKING:
    from kafkito.broker.cluster import Topology
    from kafkito.broker.security.authorizer import Authorizer
    from kafkito.broker.security.store import SecurityStore
    from kafkito.broker.share.manager import ShareManager
    from kafkito.broker.transactions import TransactionCoordinator

log = structlog.get_logger("kafkito.broker")

T = TypeVar("T")


class Cluster:
    """One node's identity as clients see it: node id, cluster id, advertised endpoint, controller, and
    the cluster's topology (the nodes, partition leaders and coordinators; one node by default).

    A multi-node cluster has one `Cluster` per node (`peers`, by node id), each node's handlers see
    their own; node ids follow `node.id` (node.id, node.id + 1, ...).
    """

    __slots__ = ("_bound_port", "_config", "_index", "_listeners", "cluster_id", "listener_port", "node_id",
                 "peers", "topology")  # fmt: skip

    def __init__(
        self,
        config: Config,
        cluster_id: str,
        bound_port: Callable[[], int | None],
        topology: Topology | None = None,
        index: int = 0,
    ) -> None:
        from kafkito.broker.cluster import Topology

        self._config = config
        self._bound_port = bound_port
        self._index = index
        self.cluster_id = cluster_id
        self.node_id = config.node_id + index
        self.topology = topology or Topology([self.node_id], lambda topic: None, lambda: 1, {})
        self.peers: dict[int, Cluster] = {self.node_id: self}
        # The bound port of each further listener (the first's is `bound_port`), set by the nodes.
        self.listener_port: Callable[[str], int | None] = lambda name: None
        self._listeners: tuple[tuple[object, ...], list[Listener]] | None = None

    @property
    def controller_id(self) -> int:
        """A single broker is its own controller; a cluster reports its lowest live node."""
        return self.node_id if self.topology.single else self.topology.controller()

    @property
    def advertised(self) -> tuple[str, int]:
        """(host, port) clients are told to connect to; read from the config each time (it may change)."""
        config = self._config
        if config.listeners:
            return self.advertised_on(None)
        host = config.advertised_host or config.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        if config.advertised_port:
            return host, config.advertised_port + self._index
        port = self._bound_port() or (config.port + self._index if config.port else config.port)
        return host, port

    @property
    def listeners(self) -> list[Listener]:
        """The broker's listeners (`listeners`, parsed again only when the properties change)."""
        c = self._config
        key = (c.listeners, c.advertised_listeners, c.listener_security_protocol_map, c.host, c.port,
               c.advertised_host, c.advertised_port)  # fmt: skip
        if self._listeners is None or self._listeners[0] != key:
            self._listeners = (key, listeners_of(c))
        return self._listeners[1]

    def advertised_on(self, listener: str | None) -> tuple[str, int]:
        """Where clients of one listener (None: the first) reach this node, as `advertised.listeners` says."""
        listeners = self.listeners
        if listener is None or len(listeners) == 1:
            if not self._config.listeners:
                return self.advertised
            chosen, first = listeners[0], True
        else:
            chosen = next((entry for entry in listeners if entry.name == listener), listeners[0])
            first = chosen is listeners[0]
        host = chosen.advertised_host or chosen.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        if chosen.advertised_port:
            return host, chosen.advertised_port + self._index
        bound = self._bound_port() if first else self.listener_port(chosen.name)
        return host, bound or (chosen.port + self._index if chosen.port else chosen.port)

    def endpoint(self, node_id: int, listener: str | None = None) -> tuple[str, int]:
        """Where clients of `listener` (None: the first) reach `node_id` (this node or a peer)."""
        return self.peers[node_id].advertised_on(listener)

    def live_nodes(self) -> list[int]:
        """The ids of the nodes serving now, lowest first."""
        return self.topology.live_nodes()


class Fetches:
    """Fetches parked until enough data arrives: park one, wake those watching a partition."""

    __slots__ = ("_purgatory", "parked")

    def __init__(self, purgatory: Purgatory[DelayedFetch]) -> None:
        self._purgatory = purgatory
        self.parked = 0  # Fetch requests seen (the web console's fetch rate)

    def park(self, fetch: DelayedFetch, partitions: Iterable[Hashable]) -> None:
        """Complete `fetch` now if it can, else watch it on its (topic, partition) keys until done."""
        self.parked += 1
        self._purgatory.try_complete_else_watch(fetch, partitions)

    def wake(self, topic: str, partition: int) -> None:
        """Re-check the fetches parked on one partition (after an append, or the partition's deletion)."""
        self._purgatory.check_and_complete((topic, partition))


class Topics:
    """The topic and partition-log operations handlers need, over the LogManager.

    The lookups are the LogManager's own bound methods (no extra call on the Produce/Fetch paths):
    `get_log(topic, partition)` raises a LogError for an unknown topic or partition; `get(name)` and
    `get_by_id(topic_id)` return None for an unknown topic.
    """

    __slots__ = ("_fetches", "_logs", "_on_change", "ensure_offsets_topic", "get", "get_by_id", "get_log")

    def __init__(
        self,
        logs: LogManager,
        fetches: Fetches,
        on_change: Callable[[], None] = lambda: None,
        ensure_offsets_topic: Callable[[], bool] = lambda: True,
    ) -> None:
        self._logs = logs
        self._fetches = fetches
        # Told after a topic is created, deleted or grows (consumer groups' subscriptions follow).
        self._on_change = on_change
        # Creates `__consumer_offsets` if missing (FindCoordinator of a group, Metadata naming it, as
        # in Kafka); False if that failed (logged).
        self.ensure_offsets_topic = ensure_offsets_topic
        self.get_log: Callable[[str, int], PartitionLog] = logs.get_log
        self.get: Callable[[str], TopicInfo | None] = logs.topic
        self.get_by_id: Callable[[uuid.UUID], TopicInfo | None] = logs.topic_by_id

    def metadata_end_offset(self) -> int:
        """The end offset of the topic metadata log, which stands for KRaft's `__cluster_metadata`."""
        return self._logs.metadata_end_offset

    def all(self) -> list[TopicInfo]:
        return self._logs.topics()

    def log_dir(self) -> LogDirHealth:
        """The one log dir the partitions live in: its path and whether it is offline."""
        return self._logs.dir_health

    def create(
        self,
        name: str,
        partitions: int,
        replication: int,
        configs: Mapping[str, str | None],
        *,
        validate_only: bool,
    ) -> TopicInfo:
        """Create (or only validate) a topic; -1 partitions / replication factor take the broker defaults."""
        info = self._logs.create_topic(name, partitions, replication, configs, validate_only=validate_only)
        if not validate_only:
            self._on_change()
        return info

    async def create_in_background(
        self, name: str, partitions: int, replication: int, configs: Mapping[str, str | None]
    ) -> TopicInfo:
        """`create`, with the partitions' files made off the event loop (CreateTopics: thousands of
        partitions take seconds); the topic is visible once all of them exist."""
        info = await self._logs.creation.create_topic(name, partitions, replication, configs)
        self._on_change()
        return info

    async def add_partitions_in_background(self, name: str, total: int) -> TopicInfo:
        """`add_partitions`, with the new partitions' files made off the event loop."""
        info = await self._logs.creation.create_partitions(name, total)
        self._on_change()
        return info

    def auto_create(self, name: str) -> TopicInfo:
        """Create a topic a client asked for by name (auto.create.topics.enable), with the defaults."""
        info = self._logs.create_topic(name)
        log.info("topic.auto_created", topic=name, partitions=info.partitions)
        self._on_change()
        return info

    def delete(self, name: str) -> TopicInfo:
        """Delete a topic and its logs; fetches parked on it wake and answer UNKNOWN_TOPIC_OR_PARTITION."""
        info = self._logs.delete_topic(name)
        for partition in range(info.partitions):
            self._fetches.wake(info.name, partition)
        self._on_change()
        return info

    def add_partitions(self, name: str, total: int, *, validate_only: bool = False) -> TopicInfo:
        info = self._logs.create_partitions(name, total, validate_only=validate_only)
        if not validate_only:
            self._on_change()
        return info

    def describe_config(self, name: str) -> list[ConfigEntry]:
        return self._logs.describe_topic_config(name)

    def alter_config(
        self, name: str, set_: Mapping[str, str], delete: list[str], *, validate_only: bool = False
    ) -> TopicInfo:
        """SET/DELETE some of a topic's overrides (IncrementalAlterConfigs)."""
        return self._logs.alter_topic_config(name, set_, delete, validate_only=validate_only)

    def replace_config(
        self, name: str, configs: Mapping[str, str], *, validate_only: bool = False
    ) -> TopicInfo:
        """The given overrides replace all of the topic's overrides (legacy AlterConfigs)."""
        return self._logs.replace_topic_config(name, configs, validate_only=validate_only)


class TopicsOfGroups:
    """The consumer group coordinator's `TopicsView` over the LogManager."""

    __slots__ = ("_logs",)

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs

    def by_name(self, name: str) -> GroupTopic | None:
        info = self._logs.topic(name)
        return None if info is None else GroupTopic(info.topic_id, info.name, info.partitions)

    def by_id(self, topic_id: uuid.UUID) -> GroupTopic | None:
        info = self._logs.topic_by_id(topic_id)
        return None if info is None else GroupTopic(info.topic_id, info.name, info.partitions)

    def names(self) -> list[str]:
        return [info.name for info in self._logs.topics()]


class OnFirstUse(Generic[T]):
    """A service built when a request first reads it (a broker that never needs it never imports it).

    `RequestContext.bind` makes it a class attribute; the first read builds the service and puts it
    in its place, so every later read is a plain attribute read.
    """

    __slots__ = ("_build", "_name")

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, instance: object, owner: type) -> T:
        service = self._build()
        setattr(owner, self._name, service)
        return service


@dataclass(frozen=True, slots=True)
class Services:
    """Everything a handler may use, grouped once per broker; RequestContext exposes each by name."""

    cluster: Cluster
    topics: Topics
    fetches: Fetches
    configs: BrokerConfigs
    producer_ids: ProducerIdManager
    groups: GroupCoordinator
    transactions: OnFirstUse[TransactionCoordinator]  # ~8 ms of imports, for transactional clients only
    security: OnFirstUse[SecurityStore]  # ACLs, quotas, SCRAM credentials: loaded at start if stored
    share: OnFirstUse[ShareManager]  # KIP-932 share partitions and sessions, __share_group_state
    authorizer: Authorizer | None = None  # ACL enforcement (`authorizer.class.name`); None: off
