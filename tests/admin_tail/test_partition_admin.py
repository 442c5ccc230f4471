"""Partition reassignments, leader elections, log dirs and DescribeTopicPartitions on a one-node
cluster, through kafka-python's and confluent-kafka's admin clients."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from confluent_kafka import ElectionType
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic as KNewTopic
from kafka.errors import (
    InvalidReplicationAssignmentError,
    LogDirNotFoundError,
    NoError,
    NoReassignmentInProgressError,
    ReplicaNotAvailableError,
    UnknownTopicOrPartitionError,
)

from tests.support.brokers import ThreadBroker


@pytest.fixture
def admin(broker: ThreadBroker) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, client_id="tail-admin")
    client.create_topics([KNewTopic("moves", 3, 1)])
    yield client
    client.close()


def test_reassigning_to_the_live_node_completes_at_once(admin: KafkaAdminClient) -> None:
    result = admin.alter_partition_reassignments(
        {TopicPartition("moves", 0): [1], TopicPartition("moves", 1): [1]}
    )
    assert result == {TopicPartition("moves", 0): None, TopicPartition("moves", 1): None}
    assert admin.list_partition_reassignments() == {}
    assert admin.list_partition_reassignments({"moves": [0, 1, 2]}) == {}


def test_reassignments_kafka_refuses(admin: KafkaAdminClient) -> None:
    result = admin.alter_partition_reassignments(
        {
            TopicPartition("moves", 0): [7],
            TopicPartition("moves", 1): [1, 1],
            TopicPartition("moves", 2): None,
            TopicPartition("moves", 9): [1],
            TopicPartition("nowhere", 0): [1],
        }
    )
    assert result[TopicPartition("moves", 0)] is InvalidReplicationAssignmentError
    assert result[TopicPartition("moves", 1)] is InvalidReplicationAssignmentError
    assert result[TopicPartition("moves", 2)] is NoReassignmentInProgressError
    assert result[TopicPartition("moves", 9)] is UnknownTopicOrPartitionError
    assert result[TopicPartition("nowhere", 0)] is UnknownTopicOrPartitionError


def test_confluent_elects_leaders_none_needed(broker: ThreadBroker, admin: KafkaAdminClient) -> None:
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    parts = [CTopicPartition("moves", 0), CTopicPartition("moves", 2), CTopicPartition("nowhere", 0)]
    results = client.elect_leaders(ElectionType.PREFERRED, parts).result(timeout=30)
    errors = {(tp.topic, tp.partition): e for tp, e in results.items()}
    assert errors[("moves", 0)].name() == "ELECTION_NOT_NEEDED"
    assert errors[("moves", 2)].name() == "ELECTION_NOT_NEEDED"
    assert errors[("nowhere", 0)].name() == "UNKNOWN_TOPIC_OR_PART"
    unclean = client.elect_leaders(ElectionType.UNCLEAN, parts[:1]).result(timeout=30)
    assert [e.name() for e in unclean.values()] == ["ELECTION_NOT_NEEDED"]


def test_kafka_python_elects_every_partition(admin: KafkaAdminClient) -> None:
    response = admin.elect_leaders(0, None, raise_errors=False)
    assert response.error_code == 0
    (result,) = [r for r in response.replica_election_results if r.topic == "moves"]
    assert sorted((p.partition_id, p.error_code) for p in result.partition_result) == [
        (0, 84),
        (1, 84),
        (2, 84),
    ]


def test_confluent_creates_topics_with_replica_assignments(broker: ThreadBroker) -> None:
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    good = NewTopic("assigned", num_partitions=2, replica_assignment=[[1], [1]])
    unknown = NewTopic("on-nowhere", num_partitions=1, replica_assignment=[[2]])
    futures = client.create_topics([good, unknown])
    futures["assigned"].result(timeout=30)
    with pytest.raises(Exception) as refused:
        futures["on-nowhere"].result(timeout=30)
    error = refused.value.args[0]
    assert error.name() == "INVALID_REPLICA_ASSIGNMENT"
    assert (
        error.str() == "The manual partition assignment includes broker 2, but no such broker is registered."
    )
    metadata = client.list_topics(timeout=30)
    assert len(metadata.topics["assigned"].partitions) == 2
    assert "on-nowhere" not in metadata.topics
    assert metadata.topics["assigned"].partitions[1].replicas == [1]

    grown = client.create_partitions([NewPartitions("assigned", 3, replica_assignment=[[1]])])
    grown["assigned"].result(timeout=30)
    refused_growth = client.create_partitions([NewPartitions("assigned", 4, replica_assignment=[[5]])])
    with pytest.raises(Exception) as refused:
        refused_growth["assigned"].result(timeout=30)
    assert refused.value.args[0].name() == "INVALID_REPLICA_ASSIGNMENT"
    assert len(client.list_topics(timeout=30).topics["assigned"].partitions) == 3


def test_describe_log_dirs_reports_the_data_dir_and_sizes(
    broker: ThreadBroker, admin: KafkaAdminClient
) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    producer.send("moves", b"x" * 1000, partition=1).get(timeout=30)
    producer.close()
    dirs = admin.describe_log_dirs()
    flat = str(dirs)
    data_dir = os.path.abspath(broker.config.log_dirs)
    assert data_dir in flat
    response = admin.describe_log_dirs({"moves": [0, 1, 7]})
    ((broker_entry,),) = [response]
    assert broker_entry["broker"] == 1
    (result,) = broker_entry["log_dirs"]
    assert result["log_dir"] == data_dir
    assert result["error_code"] == 0
    (topic,) = result["topics"]
    sizes = {p["partition_index"]: p for p in topic["partitions"]}
    assert set(sizes) == {0, 1}  # partition 7 is not hosted: left out
    assert sizes[0]["partition_size"] == 0
    assert sizes[1]["partition_size"] > 1000
    assert all(p["offset_lag"] == 0 and p["is_future_key"] is False for p in sizes.values())
    assert result["total_bytes"] > 0 and 0 < result["usable_bytes"] <= result["total_bytes"]


def test_alter_replica_log_dirs_only_to_the_one_dir(broker: ThreadBroker, admin: KafkaAdminClient) -> None:
    data_dir = os.path.abspath(broker.config.log_dirs)
    result = admin.alter_replica_log_dirs(
        {("moves", 0, 1): data_dir, ("moves", 1, 1): "/somewhere/else", ("moves", 8, 1): data_dir}
    )
    by_partition = {tpr.partition: err for tpr, err in result.items()}
    assert by_partition[0] is NoError
    assert by_partition[1] is LogDirNotFoundError
    assert by_partition[8] is ReplicaNotAvailableError


def test_describe_topic_partitions_pages_with_its_cursor(admin: KafkaAdminClient) -> None:
    admin.create_topics([KNewTopic("pages", 5, 1)])
    first = admin.describe_topic_partitions(["pages", "moves", "absent"], response_partition_limit=4)
    topics = {t["name"]: t for t in first["topics"]}
    assert [t["name"] for t in first["topics"]] == ["absent", "moves", "pages"]
    assert topics["absent"]["error_code"] == 3
    assert [p["partition_index"] for p in topics["moves"]["partitions"]] == [0, 1, 2]
    assert [p["partition_index"] for p in topics["pages"]["partitions"]] == [0]
    assert first["next_cursor"] == {"topic_name": "pages", "partition_index": 1}
    second = admin.describe_topic_partitions(
        ["pages", "moves"], response_partition_limit=4, cursor=first["next_cursor"]
    )
    assert [t["name"] for t in second["topics"]] == ["pages"]
    assert [p["partition_index"] for p in second["topics"][0]["partitions"]] == [1, 2, 3, 4]
    assert second["next_cursor"] is None
    leader = second["topics"][0]["partitions"][0]
    assert leader["leader_id"] == 1 and leader["replica_nodes"] == [1] and leader["isr_nodes"] == [1]
