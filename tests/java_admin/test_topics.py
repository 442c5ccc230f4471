"""Admin topic calls of kafka-clients 4.4: createTopics, deleteTopics, listTopics, describeTopics,
createPartitions, describeCluster; each answered as Kafka answers it."""

from __future__ import annotations

from tests.java_admin.conftest import JavaAdmin, unique


def test_create_topics_answers_partitions_replication_id_and_configs(admin: JavaAdmin) -> None:
    name = unique("created")
    created = admin(
        "createTopics",
        topics=[dict(name=name, partitions=3, replicationFactor=1, configs={"cleanup.policy": "compact"})],
        showConfigs=["cleanup.policy", "retention.ms"],
    )
    assert created == {
        name: {"numPartitions": 3, "replicationFactor": 1, "hasTopicId": True,
               "configs": {"cleanup.policy": "compact", "retention.ms": "604800000"}}
    }  # fmt: skip
    again = admin("createTopics", topics=[dict(name=name, partitions=1)])
    assert again[name]["error"] == "TopicExistsException"
    assert "already exists" in again[name]["message"]


def test_create_topics_defaults_validate_only_and_refusals(admin: JavaAdmin) -> None:
    defaults, checked, bad_rf, bad_config = (
        unique(p) for p in ("defaults", "checked", "bad-rf", "bad-config")
    )
    created = admin(
        "createTopics",
        topics=[
            dict(name=defaults),  # the broker's num.partitions and default.replication.factor
            dict(name=bad_rf, partitions=1, replicationFactor=3),
            dict(name=bad_config, partitions=1, configs={"no.such.config": "1"}),
        ],
    )
    assert created[defaults]["numPartitions"] == 1 and created[defaults]["replicationFactor"] == 1
    assert created[bad_rf]["error"] == "InvalidReplicationFactorException"
    assert created[bad_config]["error"] == "InvalidConfigurationException"
    validated = admin("createTopics", topics=[dict(name=checked, partitions=2)], validateOnly=True)
    assert validated[checked]["numPartitions"] == 2
    assert checked not in admin("listTopics") and defaults in admin("listTopics")


def test_delete_topics_by_name_and_by_id(admin: JavaAdmin) -> None:
    by_name, by_id = admin.topic(), admin.topic()
    topic_id = admin("describeTopics", topics=[by_id])[by_id]["topicId"]
    missing = unique("missing")
    assert admin("deleteTopics", topics=[by_name, missing]) == {
        by_name: {},
        missing: {"error": "UnknownTopicOrPartitionException",
                  "message": "This server does not host this topic-partition."},
    }  # fmt: skip
    assert admin("deleteTopics", ids=[topic_id]) == {topic_id: {}}
    unknown_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    assert admin("deleteTopics", ids=[unknown_id])[unknown_id]["error"] == "UnknownTopicIdException"
    listed = admin("listTopics")
    assert by_name not in listed and by_id not in listed


def test_list_topics_hides_internal_topics_unless_asked(admin: JavaAdmin) -> None:
    topic = admin.topic()
    group = unique("g")
    admin(
        "alterConsumerGroupOffsets", group=group, topic=topic, offsets={"0": 0}
    )  # __consumer_offsets exists
    assert admin("listTopics")[topic] is False
    assert "__consumer_offsets" not in admin("listTopics")
    assert admin("listTopics", internal=True)["__consumer_offsets"] is True


def test_describe_topics_by_name_and_id_with_authorized_operations(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    described = admin("describeTopics", topics=[topic], authorizedOperations=True)[topic]
    assert described["name"] == topic and described["internal"] is False
    assert described["partitions"] == [
        {"partition": p, "leader": 1, "replicas": [1], "isr": [1]} for p in range(2)
    ]
    assert described["authorizedOperations"] == sorted(
        ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]
    )
    by_id = admin("describeTopics", ids=[described["topicId"]])[described["topicId"]]
    assert by_id["name"] == topic and by_id["authorizedOperations"] is None
    missing = unique("missing")
    assert admin("describeTopics", topics=[missing])[missing]["error"] == "UnknownTopicOrPartitionException"


def test_create_partitions_grows_a_topic_and_refuses_to_shrink(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    assert admin("createPartitions", counts={topic: 5}) == {topic: {}}
    assert len(admin("describeTopics", topics=[topic])[topic]["partitions"]) == 5
    refused = admin("createPartitions", counts={topic: 3})[topic]
    assert refused["error"] == "InvalidPartitionsException"
    assert (
        refused["message"] == f"The topic {topic} currently has 5 partition(s); 3 would not be an increase."
    )
    missing = unique("missing")
    assert (
        admin("createPartitions", counts={missing: 2})[missing]["error"] == "UnknownTopicOrPartitionException"
    )


def test_describe_cluster(admin: JavaAdmin) -> None:
    cluster = admin("describeCluster", authorizedOperations=True)
    host, port = admin.bootstrap.rsplit(":", 1)
    assert cluster["nodes"] == [{"id": 1, "host": host, "port": int(port), "rack": None}]
    assert cluster["controller"] == 1
    assert cluster["clusterId"] and len(cluster["clusterId"]) == 22
    assert cluster["authorizedOperations"] == sorted(
        [
            "ALTER",
            "ALTER_CONFIGS",
            "CLUSTER_ACTION",
            "CREATE",
            "DESCRIBE",
            "DESCRIBE_CONFIGS",
            "IDEMPOTENT_WRITE",
        ]
    )
    assert admin("describeCluster")["authorizedOperations"] is None
