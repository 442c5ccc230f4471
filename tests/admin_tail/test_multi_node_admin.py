"""The partition admin APIs on a three-node cluster (kafkito.testing.start(nodes=3)): manual
assignments are placed as given, reassignments complete at once, preferred elections move leadership
back, unknown nodes are refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewPartitions
from kafka.admin import NewTopic as KNewTopic
from kafka.errors import InvalidReplicationAssignmentError

from kafkito.testing import KafkitoHandle, start


@pytest.fixture
def cluster() -> Iterator[KafkitoHandle]:
    with start(nodes=3) as handle:
        yield handle


@pytest.fixture
def admin(cluster: KafkitoHandle) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, client_id="tail-cluster")
    yield client
    client.close()


def _state(cluster: KafkitoHandle, topic: str) -> dict[int, tuple[int, list[int]]]:
    """partition -> (leader, replicas), as the cluster's topology holds them."""
    return {p: (s["leader"], s["replicas"]) for p, s in enumerate(cluster.topology()["topics"][topic])}


def test_manual_assignments_are_placed_as_given(cluster: KafkitoHandle, admin: KafkaAdminClient) -> None:
    admin.create_topics([KNewTopic("placed", replica_assignments={0: [3, 1], 1: [2, 3]})])
    assert _state(cluster, "placed") == {0: (3, [3, 1]), 1: (2, [2, 3])}
    admin.create_partitions({"placed": NewPartitions(3, [[1, 2]])})
    assert _state(cluster, "placed")[2] == (1, [1, 2])
    with pytest.raises(InvalidReplicationAssignmentError):
        admin.create_topics([KNewTopic("nowhere", replica_assignments={0: [9]})], raise_errors=True)


def test_reassignment_completes_and_preferred_election_restores_leaders(
    cluster: KafkitoHandle, admin: KafkaAdminClient
) -> None:
    admin.create_topics([KNewTopic("moving", replica_assignments={0: [1, 2]})])
    result = admin.alter_partition_reassignments({TopicPartition("moving", 0): [2, 3]})
    assert result == {TopicPartition("moving", 0): None}
    assert _state(cluster, "moving")[0] == (2, [2, 3])
    assert admin.list_partition_reassignments() == {}

    cluster.stop_node(2)
    assert _state(cluster, "moving")[0][0] == 3
    cluster.start_node(2)  # takes back its preferred leadership on its own
    cluster.move_leader("moving", 0, 3)  # now 3 leads and is preferred
    assert _state(cluster, "moving")[0] == (3, [3, 2])
    response = admin.elect_leaders(0, {"moving": [0]}, raise_errors=False)
    (partition,) = response.replica_election_results[0].partition_result
    assert partition.error_code == 84  # 3 is the preferred leader already


def test_a_manual_placement_survives_a_restart(cluster: KafkitoHandle, admin: KafkaAdminClient) -> None:
    admin.create_topics([KNewTopic("kept", replica_assignments={0: [3, 2]})])
    admin.alter_partition_reassignments({TopicPartition("kept", 0): [2, 1]})
    admin.close()
    cluster.restart()
    assert _state(cluster, "kept")[0][1] == [2, 1]
