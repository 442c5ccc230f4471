"""Admin cluster calls of kafka-clients 4.4: describeFeatures, updateFeatures, electLeaders,
alterPartitionReassignments/listPartitionReassignments, alterReplicaLogDirs; and the Admin methods whose
APIs are a later issue: describeMetadataQuorum (DescribeQuorum), listConfigResources
(ListConfigResources), the delegation tokens (Create/Renew/Expire/DescribeDelegationToken),
unregisterBroker (UnregisterBroker), describeStreamsGroups (StreamsGroupDescribe). While kafkito does
not serve one, the client must refuse its method cleanly with UnsupportedVersionException; once it
does, the method must answer as Kafka's does."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.broker.handlers import served_versions
from tests.java_admin.conftest import JavaAdmin, unique


def test_describe_and_update_features(admin: JavaAdmin) -> None:
    features = admin("describeFeatures")
    assert features["finalized"]["transaction.version"] == [2, 2]
    assert features["finalized"]["group.version"] == [1, 1]
    assert features["supported"]["transaction.version"][0] == 0
    assert features["epoch"] >= 0
    level = features["finalized"]["transaction.version"][1]
    same = admin("updateFeatures", updates={"transaction.version": dict(level=level, type="UPGRADE")},
                 validateOnly=True)  # fmt: skip
    assert same == {"transaction.version": {}}
    too_high = admin("updateFeatures", updates={"transaction.version": dict(level=99, type="UPGRADE")})
    assert too_high["transaction.version"]["error"] == "InvalidUpdateVersionException"
    unknown = admin("updateFeatures", updates={"no.such.feature": dict(level=1, type="UPGRADE")})
    assert unknown["no.such.feature"]["error"] == "InvalidUpdateVersionException"


def test_elect_leaders_on_a_single_node(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    preferred = admin("electLeaders", type="PREFERRED", topic=topic, partitions=[0, 1])
    assert {tp: r["error"] for tp, r in preferred.items()} == dict.fromkeys(
        [f"{topic}-0", f"{topic}-1"], "ElectionNotNeededException"
    )
    unclean = admin("electLeaders", type="UNCLEAN", topic=topic, partitions=[0])
    assert unclean[f"{topic}-0"]["error"] == "ElectionNotNeededException"
    missing = unique("missing")
    unknown = admin("electLeaders", type="PREFERRED", topic=missing, partitions=[0])
    assert unknown[f"{missing}-0"]["error"] == "UnknownTopicOrPartitionException"


def test_partition_reassignments(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    same = admin("alterPartitionReassignments", topic=topic, targets={"0": [1]})
    assert same == {f"{topic}-0": {}}
    assert admin("listPartitionReassignments") == {}
    assert admin("listPartitionReassignments", topic=topic, partitions=[0, 1]) == {}
    nowhere = admin("alterPartitionReassignments", topic=topic, targets={"1": [5]})
    assert nowhere[f"{topic}-1"]["error"] == "InvalidReplicaAssignmentException"
    cancel = admin("alterPartitionReassignments", topic=topic, targets={"1": None})
    assert cancel[f"{topic}-1"]["error"] == "NoReassignmentInProgressException"


def test_alter_replica_log_dirs_to_an_unknown_dir(admin: JavaAdmin) -> None:
    topic = admin.topic()
    moved = admin("alterReplicaLogDirs", topic=topic, partitions=[0], broker=1, dir="/no/such/dir")
    assert moved[f"{topic}-0"]["error"] == "LogDirNotFoundException"


# Admin method -> (the API it sends, its arguments, what Kafka 4.4 answers here: None for a result, else
# the exception the client throws). Where kafkito does not serve the API yet, the client must refuse
# the call cleanly with UnsupportedVersionException and carry on.
LATER_APIS: dict[str, tuple[int, dict[str, Any], str | None]] = {
    "describeMetadataQuorum": (55, {}, None),
    "listConfigResources": (74, {}, None),
    # Kafka refuses tokens on a PLAINTEXT listener before anything else.
    "createDelegationToken": (38, {}, "UnsupportedByAuthenticationException"),
    "renewDelegationToken": (39, {}, "UnsupportedByAuthenticationException"),
    "expireDelegationToken": (40, {}, "UnsupportedByAuthenticationException"),
    "describeDelegationToken": (41, {}, "UnsupportedByAuthenticationException"),
    "unregisterBroker": (64, {"broker": 5}, "BrokerIdNotRegisteredException"),
}


@pytest.mark.parametrize("call", sorted(LATER_APIS))
def test_admin_methods_of_later_apis(admin: JavaAdmin, call: str) -> None:
    api_key, args, kafka_answer = LATER_APIS[call]
    if admin.kind == "kafkito" and api_key not in served_versions():
        refused = admin.refused(call, **args)
        assert refused.error_class == "UnsupportedVersionException", refused
        assert admin("describeCluster")["nodes"]  # the client carries on
        return
    if kafka_answer is not None:
        assert admin.refused(call, **args).error_class == kafka_answer
    elif call == "describeMetadataQuorum":
        assert admin(call)["leaderId"] == 1
    else:
        assert isinstance(admin(call), list)


def test_describe_streams_groups(admin: JavaAdmin) -> None:
    """Kafka 4.4 with streams among group.coordinator.rebalance.protocols, and kafkito, answer a
    streams group nobody knows as not found."""
    group = unique("streams")
    described = admin("describeStreamsGroups", groups=[group])[group]
    assert described == {"error": "GroupIdNotFoundException", "message": f"Group {group} not found."}
