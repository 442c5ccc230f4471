"""`Topology`: the cluster's nodes (live or stopped) and, per partition, its replicas, ISR and leader.

Replicas are bookkeeping in one process: every node reads and writes the one shared LogManager, and
a partition's leader is the node that may serve it. A stopped node leaves the ISR of its partitions
(unless it is the last member, as Kafka keeps it) and each partition it led elects the first live
replica of its ISR, or has no leader (-1). A node that starts again rejoins the ISR at once (its
log is the shared one, so it is caught up) and takes back the leadership of the partitions it is
the preferred leader of, as Kafka's automatic leader rebalance does after its check interval.
Each topic's replicas (preferred leader first) are saved through `save` whenever they change, and
a restart places topics as saved (`cluster-placement.json` in the data dir); ISRs and leaders
start over with every node live.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import structlog

from kafkito.broker.cluster import placement
from kafkito.broker.offsets.partitioner import partition_for

log = structlog.get_logger("kafkito.cluster")

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
NO_LEADER = -1


@dataclass(slots=True)
class PartitionState:
    """One partition's replicas (preferred leader first), in-sync replicas and leader (-1: none)."""

    replicas: list[int]
    isr: list[int]
    leader: int

    def as_dict(self) -> dict[str, object]:
        return {"leader": self.leader, "replicas": list(self.replicas), "isr": list(self.isr)}


class Topology:
    """Nodes and partition leadership of one in-process cluster.

    `partitions_of(topic)` gives a topic's partition count (None: no such topic); internal topics
    that do not exist yet are placed with the count they will be created with (`internal`), so that
    coordinators are known before their topic is.
    """

    def __init__(
        self,
        node_ids: Iterable[int],
        partitions_of: Callable[[str], int | None],
        default_replication: Callable[[], int],
        internal: dict[str, tuple[Callable[[], int], int]],
        placements: Mapping[str, list[list[int]]] | None = None,
        save: Callable[[dict[str, list[list[int]]]], None] | None = None,
    ) -> None:
        self.node_ids = sorted(node_ids)
        self.live: set[int] = set(self.node_ids)
        self._partitions_of = partitions_of
        self._default_replication = default_replication
        self._internal = internal  # topic -> (partition count, replication factor)
        self._topics: dict[str, list[PartitionState]] = {}
        self._replication: dict[str, int] = {}  # as created (CreateTopics), until deleted
        # (topic, partition) -> leader: the one dict lookup of the leadership check
        self.leaders: dict[tuple[str, int], int] = {}
        self._saved = dict(placements or {})  # replicas as placed before a restart, used on first sight
        self._save = save

    @property
    def single(self) -> bool:
        return len(self.node_ids) == 1

    def live_nodes(self) -> list[int]:
        return [n for n in self.node_ids if n in self.live]

    def controller(self) -> int:
        """The node reported as controller: the lowest live node (-1 when none is live)."""
        live = self.live_nodes()
        return live[0] if live else NO_LEADER

    # -- partitions ----------------------------------------------------------------------------

    def partitions(self, topic: str) -> list[PartitionState]:
        """Every partition of `topic`, placed on first sight (empty for a topic that does not exist)."""
        states = self._topics.get(topic)
        count = self._count(topic)
        if count is None:
            return []
        if states is None or len(states) < count:
            states = self._place(topic, count, states or [])
        return states

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        states = self.partitions(topic)
        return states[partition] if 0 <= partition < len(states) else None

    def leader_of(self, topic: str, partition: int) -> int | None:
        """The partition's leader (-1: none), or None for a partition that does not exist."""
        leader = self.leaders.get((topic, partition))
        if leader is not None:
            return leader
        state = self.partition(topic, partition)
        return None if state is None else state.leader

    def _count(self, topic: str) -> int | None:
        count = self._partitions_of(topic)
        if count is None and topic in self._internal:
            return self._internal[topic][0]()
        return count

    def replication_factor(self, topic: str) -> int:
        if topic in self._internal:
            return min(self._internal[topic][1], len(self.node_ids))
        rf = self._replication.get(topic) or self._default_replication()
        return max(1, min(rf, len(self.node_ids)))

    def _place(self, topic: str, count: int, known: list[PartitionState]) -> list[PartitionState]:
        """Place the partitions not placed yet over the live nodes (all nodes when none is live)."""
        nodes = self.live_nodes() or self.node_ids
        rf = min(self.replication_factor(topic), len(nodes))
        assigned = placement.assign(topic, count, rf, nodes)
        saved = self._saved.pop(topic, [])
        states = list(known)
        for p in range(len(known), count):
            replicas = assigned[p]
            if p < len(saved) and saved[p] and set(saved[p]) <= set(self.node_ids):
                replicas = saved[p]
            states.append(PartitionState(list(replicas), list(replicas), replicas[0]))
            self.leaders[topic, p] = replicas[0]
        self._topics[topic] = states
        self._changed()
        return states

    def placements(self) -> dict[str, list[list[int]]]:
        """Every placed topic's replicas, preferred leader first (what a restart places them by)."""
        out = {t: [list(s.replicas) for s in states] for t, states in self._topics.items()}
        return {**self._saved, **out}

    def _changed(self) -> None:
        if self._save is not None:
            self._save(self.placements())

    def created(self, topic: str, replication: int) -> None:
        """CreateTopics made `topic` with this replication factor (-1: the default). An internal topic
        keeps the placement it had before it existed (its coordinators may have been moved)."""
        if topic in self._internal and topic in self._topics:
            return
        self.forget(topic)
        if replication > 0:
            self._replication[topic] = replication
        self.partitions(topic)

    def topic_changed(self, topic: str, replication: int | None) -> None:
        """The LogManager's listener: a topic created with `replication` replicas, or deleted (None)."""
        if replication is None:
            self.forget(topic)
        else:
            self.created(topic, replication)

    def forget(self, topic: str) -> None:
        """The topic was deleted: its placement goes with it."""
        self._replication.pop(topic, None)
        self._saved.pop(topic, None)
        for p in range(len(self._topics.pop(topic, ()))):
            self.leaders.pop((topic, p), None)
        self._changed()

    def check_replication(self, replication: int) -> None:
        """Refuse a replication factor larger than the live nodes, as Kafka's controller does."""
        live = len(self.live_nodes())
        if replication > live:
            raise ValueError(
                f"unable to replicate the partition {replication} time(s): "
                f"only {live} broker(s) are registered"
            )

    # -- coordinators --------------------------------------------------------------------------

    def group_partition(self, group_id: str) -> int:
        """The `__consumer_offsets` partition of a group (Kafka's hash)."""
        return partition_for(group_id, self._count(OFFSETS_TOPIC) or 1)

    def transaction_partition(self, transactional_id: str) -> int:
        """The `__transaction_state` partition of a transactional id (the same hash)."""
        return partition_for(transactional_id, self._count(TRANSACTION_STATE_TOPIC) or 1)

    def group_coordinator_of(self, group_id: str) -> int:
        """The group's coordinator: the leader of its `__consumer_offsets` partition (-1: none)."""
        leader = self.leader_of(OFFSETS_TOPIC, self.group_partition(group_id))
        return NO_LEADER if leader is None else leader

    def transaction_coordinator_of(self, transactional_id: str) -> int:
        """The id's coordinator: the leader of its `__transaction_state` partition (-1: none)."""
        leader = self.leader_of(TRANSACTION_STATE_TOPIC, self.transaction_partition(transactional_id))
        return NO_LEADER if leader is None else leader

    # -- changes -------------------------------------------------------------------------------

    def _set_leader(self, topic: str, partition: int, state: PartitionState, leader: int) -> None:
        if state.leader != leader:
            log.info("partition.leader", topic=topic, partition=partition, old=state.leader, new=leader)
        state.leader = leader
        self.leaders[topic, partition] = leader

    def _all(self) -> list[tuple[str, int, PartitionState]]:
        return [(t, p, s) for t, states in self._topics.items() for p, s in enumerate(states)]

    def stop(self, node: int) -> None:
        """`node` went away: it leaves the ISRs (not as their last member) and loses its leaderships."""
        self._require(node)
        self.live.discard(node)
        for topic, p, state in self._all():
            if node in state.isr and len(state.isr) > 1:
                state.isr.remove(node)
            if state.leader == node or state.leader == NO_LEADER:
                elected = next((r for r in state.replicas if r in self.live and r in state.isr), NO_LEADER)
                self._set_leader(topic, p, state, elected)

    def start(self, node: int) -> None:
        """`node` is back: it rejoins the ISRs and leads again where it is the preferred leader."""
        self._require(node)
        self.live.add(node)
        for topic, p, state in self._all():
            if node not in state.replicas:
                continue
            if node not in state.isr:
                state.isr.append(node)
            if state.replicas[0] == node or state.leader == NO_LEADER:
                self._set_leader(topic, p, state, node)

    def move_leader(self, topic: str, partition: int, node: int) -> PartitionState:
        """Make `node` the leader (and preferred leader) of the partition. A node that is not one of its
        replicas replaces the current leader among them, as a reassignment would."""
        self._require(node)
        if node not in self.live:
            raise ValueError(f"node {node} is stopped: it cannot lead")
        state = self.partition(topic, partition)
        if state is None:
            raise LookupError(f"no partition {topic}-{partition}")
        if node not in state.replicas:
            gone = state.leader if state.leader in state.replicas else state.replicas[0]
            state.replicas[state.replicas.index(gone)] = node
            if gone in state.isr:
                state.isr.remove(gone)
        state.replicas.remove(node)
        state.replicas.insert(0, node)
        if node not in state.isr:
            state.isr.append(node)
        self._set_leader(topic, partition, state, node)
        self._changed()
        return state

    def _require(self, node: int) -> None:
        if node not in self.node_ids:
            raise LookupError(f"no node {node} (nodes: {', '.join(map(str, self.node_ids))})")
