"""Multi-node clusters in one process: the nodes, where partitions and coordinators live, routing.

`Topology` holds the nodes (live or stopped) and each partition's replicas, ISR and leader;
`placement` spreads replicas as Kafka does; `routing` answers a request sent to the wrong node as
Kafka's wrong node would (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR); `listeners` opens one listener
per node. With one node (the default) nothing here is on a request's path.
"""

from kafkito.broker.cluster.topology import PartitionState, Topology

__all__ = ["PartitionState", "Topology"]
