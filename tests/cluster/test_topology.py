"""What a three-node cluster tells clients, request by request: Metadata, FindCoordinator and
DescribeCluster report the live nodes, leaders, replicas and coordinators; a node that does not lead
a partition answers NOT_LEADER_OR_FOLLOWER, one that does not coordinate a group NOT_COORDINATOR."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import kafkito.testing
from kafkito.protocol.errors import ErrorCode
from kafkito.testing import KafkitoHandle
from tests.support.wire import WireClient

METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER, HEARTBEAT, LIST_OFFSETS = 3, 10, 60, 12, 2


@pytest.fixture
def cluster(tmp_path: Any) -> Iterator[KafkitoHandle]:
    with kafkito.testing.start(nodes=3, data_dir=tmp_path, log_level="warning") as handle:
        yield handle


def _address(cluster: KafkitoHandle, node_id: int) -> str:
    node = next(n for n in cluster.nodes if n.node_id == node_id)
    return node.bootstrap_servers


def _metadata(cluster: KafkitoHandle, node_id: int, topic: str) -> Any:
    with WireClient(_address(cluster, node_id)) as wire:
        return wire.request(METADATA, 12, topics=[{"name": topic}], allow_auto_topic_creation=False)


def _partitions(response: Any) -> list[Any]:
    return sorted(response.topics[0].partitions, key=lambda p: p.partition_index)


def test_three_nodes_each_with_its_own_listener_and_id(cluster: KafkitoHandle) -> None:
    nodes = cluster.nodes
    assert [n.node_id for n in nodes] == [1, 2, 3]
    assert len({n.port for n in nodes}) == 3
    assert cluster.bootstrap_servers == ",".join(n.bootstrap_servers for n in nodes)
    for node in nodes:
        with WireClient(node.bootstrap_servers) as wire:
            described = wire.request(DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=False)
        assert described.error_code == 0
        assert [(b.broker_id, b.port) for b in described.brokers] == [(n.node_id, n.port) for n in nodes]
        assert described.controller_id == 1


def test_metadata_spreads_leaders_and_replicas_over_the_nodes(cluster: KafkitoHandle) -> None:
    cluster.create_topic("spread", partitions=6, replication_factor=2)
    answers = [_metadata(cluster, n.node_id, "spread") for n in cluster.nodes]
    first = answers[0]
    assert [(b.node_id, b.port) for b in first.brokers] == [(n.node_id, n.port) for n in cluster.nodes]
    parts = _partitions(first)
    leaders = [p.leader_id for p in parts]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]  # round-robin: two partitions led by each node
    for p in parts:
        assert len(p.replica_nodes) == 2 and len(set(p.replica_nodes)) == 2
        assert p.replica_nodes[0] == p.leader_id and sorted(p.isr_nodes) == sorted(p.replica_nodes)
    for other in answers[1:]:  # every node tells the same story
        assert [(p.leader_id, p.replica_nodes) for p in _partitions(other)] == [
            (p.leader_id, p.replica_nodes) for p in parts
        ]
    topology = cluster.topology()["topics"]["spread"]
    assert [t["leader"] for t in topology] == leaders


def test_a_stopped_node_leaves_metadata_and_its_partitions_elect_other_leaders(
    cluster: KafkitoHandle,
) -> None:
    cluster.create_topic("replicated", partitions=3, replication_factor=3)
    cluster.create_topic("single", partitions=3, replication_factor=1)
    led_by_2 = [p.partition_index for p in _partitions(_metadata(cluster, 1, "single")) if p.leader_id == 2]
    cluster.stop_node(2)

    response = _metadata(cluster, 1, "replicated")
    assert [b.node_id for b in response.brokers] == [1, 3]
    for p in _partitions(response):
        assert p.error_code == 0 and p.leader_id in (1, 3)
        assert 2 not in p.isr_nodes and p.offline_replicas == [2]
    single = _partitions(_metadata(cluster, 3, "single"))
    for p in single:
        if p.partition_index in led_by_2:  # its only replica is down: no leader
            assert (p.leader_id, p.error_code) == (-1, ErrorCode.LEADER_NOT_AVAILABLE)
            assert p.offline_replicas == [2]
        else:
            assert p.leader_id in (1, 3) and p.error_code == 0
    with pytest.raises(OSError):
        WireClient(next(n for n in cluster.nodes if n.node_id == 2).bootstrap_servers, timeout=2).close()

    cluster.start_node(2)
    back = _partitions(_metadata(cluster, 2, "single"))
    assert [p.leader_id for p in back if p.partition_index in led_by_2] == [2] * len(led_by_2)
    assert [b.node_id for b in _metadata(cluster, 2, "single").brokers] == [1, 2, 3]


def test_a_partition_asked_of_a_node_that_does_not_lead_it_is_not_leader_or_follower(
    cluster: KafkitoHandle,
) -> None:
    cluster.create_topic("led", partitions=1)
    leader = cluster.leader("led", 0)
    cluster.move_leader("led", 0, 3 if leader != 3 else 1)
    leader = cluster.leader("led", 0)
    follower = 1 if leader != 1 else 2
    ask = dict(replica_id=-1, isolation_level=0, topics=[dict(name="led", partitions=[dict(
        partition_index=0, current_leader_epoch=-1, timestamp=-1)])])  # fmt: skip
    with WireClient(_address(cluster, follower)) as wire:
        wrong = wire.request(LIST_OFFSETS, 7, **ask)
    with WireClient(_address(cluster, leader)) as wire:
        right = wire.request(LIST_OFFSETS, 7, **ask)
    assert wrong.topics[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert right.topics[0].partitions[0].error_code == 0


def test_find_coordinator_names_the_groups_coordinator_on_every_node_and_follows_a_move(
    cluster: KafkitoHandle,
) -> None:
    def asked(node_id: int) -> list[Any]:
        with WireClient(_address(cluster, node_id)) as wire:
            return list(
                wire.request(FIND_COORDINATOR, 4, key_type=0, coordinator_keys=["g1", "g2"]).coordinators
            )

    found = [asked(n) for n in (1, 2, 3)]
    assert all([(c.key, c.node_id, c.port) for c in f] == [(c.key, c.node_id, c.port) for c in found[0]]
               for f in found)  # fmt: skip
    g1 = found[0][0]
    assert g1.error_code == 0 and g1.node_id == cluster.coordinator("g1")
    assert g1.port == next(n.port for n in cluster.nodes if n.node_id == g1.node_id)

    target = 1 if g1.node_id != 1 else 2
    cluster.move_coordinator("g1", target)
    assert asked(3)[0].node_id == target == cluster.coordinator("g1")
    with WireClient(_address(cluster, target)) as wire:
        old = wire.request(FIND_COORDINATOR, 1, key="g1", key_type=0)
    assert (old.error_code, old.node_id) == (0, target)


def test_a_group_request_to_a_node_that_does_not_coordinate_it_is_not_coordinator(
    cluster: KafkitoHandle,
) -> None:
    coordinator = cluster.coordinator("hb")
    other = 1 if coordinator != 1 else 2
    beat = dict(group_id="hb", generation_id=1, member_id="m")
    with WireClient(_address(cluster, other)) as wire:
        assert wire.request(HEARTBEAT, 4, **beat).error_code == ErrorCode.NOT_COORDINATOR
    with WireClient(_address(cluster, coordinator)) as wire:
        assert wire.request(HEARTBEAT, 4, **beat).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_stopped_coordinator_moves_the_group_to_a_live_replica(cluster: KafkitoHandle) -> None:
    first = cluster.coordinator("moving")
    cluster.stop_node(first)
    second = cluster.coordinator("moving")
    assert second not in (first, -1)
    with WireClient(_address(cluster, second)) as wire:
        found = wire.request(FIND_COORDINATOR, 1, key="moving", key_type=0)
    assert (found.error_code, found.node_id) == (0, second)


def test_one_node_keeps_its_single_broker_view(tmp_path: Any) -> None:
    with kafkito.testing.start(data_dir=tmp_path, log_level="warning") as one:
        one.create_topic("alone", partitions=2)
        with WireClient(one.bootstrap_servers) as wire:
            response = wire.request(METADATA, 12, topics=[{"name": "alone"}], allow_auto_topic_creation=False)
        assert [(b.node_id, b.port) for b in response.brokers] == [(1, one.port)]
        assert [(p.leader_id, p.replica_nodes, p.isr_nodes) for p in _partitions(response)] == [
            (1, [1], [1]), (1, [1], [1])
        ]  # fmt: skip
        assert one.topology()["nodes"] == [
            {"node_id": 1, "host": "127.0.0.1", "port": one.port, "live": True}
        ]
        with pytest.raises(ValueError, match="one node"):
            one.stop_node(1)


def test_a_request_for_partitions_of_several_leaders_is_served_where_led_and_refused_elsewhere(
    cluster: KafkitoHandle,
) -> None:
    cluster.create_topic("here", partitions=2)
    cluster.create_topic("there", partitions=1)
    cluster.move_leader("here", 0, 1)
    cluster.move_leader("here", 1, 2)
    cluster.move_leader("there", 0, 3)

    def partition(index: int) -> dict[str, int]:
        return dict(partition_index=index, current_leader_epoch=-1, timestamp=-1)

    topics = [
        dict(name="here", partitions=[partition(0), partition(1)]),
        dict(name="there", partitions=[partition(0)]),
    ]
    with WireClient(_address(cluster, 1)) as wire:
        answer = wire.request(LIST_OFFSETS, 7, replica_id=-1, isolation_level=0, topics=topics)
    errors = {(t.name, p.partition_index): p.error_code for t in answer.topics for p in t.partitions}
    assert errors == {
        ("here", 0): 0,
        ("here", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ("there", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER,
    }


def test_a_restart_keeps_the_replicas_and_the_moved_leaders(cluster: KafkitoHandle) -> None:
    cluster.create_topic("kept", partitions=3, replication_factor=2)
    cluster.move_leader("kept", 0, 3)
    cluster.move_leader("kept", 1, 3)
    cluster.move_coordinator("kept-group", 2)
    before = cluster.topology(internal=True)["topics"]
    cluster.stop_node(1)
    cluster.restart()
    after = cluster.topology(internal=True)["topics"]
    assert [p["replicas"] for p in after["kept"]] == [p["replicas"] for p in before["kept"]]
    assert [cluster.leader("kept", p) for p in range(3)][:2] == [3, 3]
    assert cluster.coordinator("kept-group") == 2
    assert [n.live for n in cluster.nodes] == [True, True, True]
