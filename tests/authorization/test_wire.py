"""Exact requests over PLAINTEXT (principal User:ANONYMOUS) to a broker enforcing ACLs: each API answers
Kafka's authorization error where Kafka does (per topic, per group, per key, or the whole request)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AclOperation, ResourcePatternType, ResourceType

from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker
from tests.authorization.test_confluent import create_topic, grant, produce
from tests.log.helpers import batch
from tests.support.wire import WireClient

ANON = "User:ANONYMOUS"
TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GAF = ErrorCode.GROUP_AUTHORIZATION_FAILED
CAF = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def allow(broker: AclBroker, rt: ResourceType, name: str, op: AclOperation) -> None:
    grant(broker, rt, name, op, principal=ANON)


@pytest.fixture
def wire(secured: AclBroker) -> WireClient:
    create_topic(secured, "open")
    create_topic(secured, "closed")
    assert produce(secured.confluent("admin"), "open") == [None]
    assert produce(secured.confluent("admin"), "closed") == [None]
    return WireClient(secured.plaintext)


def partition_errors(topics: list[object], partitions: str = "partitions") -> dict[str, list[int]]:
    return {t.name: [p.error_code for p in getattr(t, partitions)] for t in topics}  # type: ignore[attr-defined]


def test_produce_refuses_each_topic_it_may_not_write(secured: AclBroker, wire: WireClient) -> None:
    allow(secured, ResourceType.TOPIC, "open", AclOperation.WRITE)
    batch = _one_record_batch()
    data = [{"name": n, "partition_data": [{"index": 0, "records": batch}]} for n in ("open", "closed")]
    response = wire.request(0, 9, transactional_id=None, acks=-1, timeout_ms=5000, topic_data=data)
    errors = {t.name: [p.error_code for p in t.partition_responses] for t in response.responses}
    assert errors == {"open": [0], "closed": [TAF]}
    response = wire.request(0, 9, transactional_id="tx", acks=-1, timeout_ms=5000, topic_data=data)
    assert {p.error_code for t in response.responses for p in t.partition_responses} == {TXN}


def test_fetch_and_list_offsets_refuse_topics_without_read_or_describe(
    secured: AclBroker, wire: WireClient
) -> None:
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    topics = [
        {"topic": n, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
        for n in ("open", "closed", "missing")
    ]
    response = wire.request(
        1, 12, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=topics
    )
    errors = {t.topic: [p.error_code for p in t.partitions] for t in response.responses}
    assert errors == {"open": [0], "closed": [TAF], "missing": [TAF]}
    assert next(t for t in response.responses if t.topic == "open").partitions[0].records
    topics = [
        {"name": n, "partitions": [{"partition_index": 0, "timestamp": -1}]} for n in ("open", "closed")
    ]
    response = wire.request(2, 7, replica_id=-1, isolation_level=0, topics=topics)
    assert partition_errors(response.topics) == {"open": [0], "closed": [TAF]}
    follower = wire.request(
        1, 12, replica_id=2, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, topics=topics[:0]
    )
    assert follower.error_code in (0, TAF)  # no partitions asked: nothing to refuse


def test_metadata_filters_listings_and_refuses_named_topics(secured: AclBroker, wire: WireClient) -> None:
    allow(secured, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
    everything = wire.request(
        3, 12, topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    assert [t.name for t in everything.topics] == ["open"]
    named = [{"name": n, "topic_id": None} for n in ("open", "closed", "newcomer")]
    response = wire.request(
        3, 12, topics=named, allow_auto_topic_creation=True, include_topic_authorized_operations=False
    )
    assert {t.name: t.error_code for t in response.topics} == {"open": 0, "closed": TAF, "newcomer": TAF}
    # DESCRIBE without CREATE: not created, still refused; CREATE on the topic creates it.
    allow(secured, ResourceType.TOPIC, "newcomer", AclOperation.DESCRIBE)
    response = wire.request(
        3, 12, topics=named[2:], allow_auto_topic_creation=True, include_topic_authorized_operations=False
    )
    assert [t.error_code for t in response.topics] == [TAF]
    allow(secured, ResourceType.TOPIC, "newcomer", AclOperation.CREATE)
    response = wire.request(
        3, 12, topics=named[2:], allow_auto_topic_creation=True, include_topic_authorized_operations=False
    )
    assert [t.error_code for t in response.topics] != [TAF]


def test_group_apis_need_the_group(secured: AclBroker, wire: WireClient) -> None:
    join = wire.request(
        11,
        5,
        group_id="g1",
        session_timeout_ms=10000,
        rebalance_timeout_ms=10000,
        member_id="",
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[{"name": "range", "metadata": b""}],
    )
    assert join.error_code == GAF
    heartbeat = wire.request(12, 4, group_id="g1", generation_id=1, member_id="m", group_instance_id=None)
    assert heartbeat.error_code == GAF
    fetched = wire.request(9, 7, group_id="g1", topics=None, require_stable=False)
    assert fetched.error_code == GAF
    described = wire.request(15, 5, groups=["g1", "g2"], include_authorized_operations=False)
    assert {g.group_id: g.error_code for g in described.groups} == {"g1": GAF, "g2": GAF}
    allow(secured, ResourceType.GROUP, "g2", AclOperation.DESCRIBE)
    described = wire.request(15, 5, groups=["g1", "g2"], include_authorized_operations=False)
    assert {g.group_id: g.error_code for g in described.groups} == {"g1": GAF, "g2": 0}
    deleted = wire.request(42, 2, groups_names=["g1"])
    assert [(r.group_id, r.error_code) for r in deleted.results] == [("g1", GAF)]
    coordinators = wire.request(10, 4, key_type=0, coordinator_keys=["g1", "g2"])
    assert {c.key: c.error_code for c in coordinators.coordinators} == {"g1": GAF, "g2": 0}
    coordinator = wire.request(10, 3, key="tx", key_type=1)
    assert coordinator.error_code == TXN


def test_offset_commit_and_fetch_refuse_topics(secured: AclBroker, wire: WireClient) -> None:
    allow(secured, ResourceType.GROUP, "g", AclOperation.READ)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    topics = [
        {"name": n, "partitions": [{"partition_index": 0, "committed_offset": 1}]} for n in ("open", "closed")
    ]
    commit = wire.request(
        8,
        8,
        group_id="g",
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=topics,
    )
    assert partition_errors(commit.topics) == {"open": [0], "closed": [TAF]}
    asked = [{"name": n, "partition_indexes": [0]} for n in ("open", "closed")]
    fetched = wire.request(9, 7, group_id="g", topics=asked, require_stable=False)
    assert fetched.error_code == 0
    assert partition_errors(fetched.topics) == {"open": [0], "closed": [TAF]}
    assert [t.name for t in wire.request(9, 7, group_id="g", topics=None, require_stable=False).topics] == [
        "open"
    ]


def test_producer_ids_and_transactions(secured: AclBroker, wire: WireClient) -> None:
    idempotent = wire.request(
        22, 4, transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
    )
    assert idempotent.error_code == CAF
    allow(secured, ResourceType.TOPIC, "open", AclOperation.WRITE)  # WRITE on some topic is enough
    idempotent = wire.request(
        22, 4, transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
    )
    assert idempotent.error_code == 0
    txn = wire.request(
        22, 4, transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
    )
    assert txn.error_code == TXN
    allow(secured, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
    txn = wire.request(
        22, 4, transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
    )
    assert txn.error_code == 0
    added = wire.request(
        24,
        3,
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=txn.producer_id,
        v3_and_below_producer_epoch=txn.producer_epoch,
        v3_and_below_topics=[{"name": "open", "partitions": [0]}, {"name": "closed", "partitions": [0]}],
    )
    errors = {
        t.name: [p.partition_error_code for p in t.results_by_partition]
        for t in added.results_by_topic_v3_and_below
    }
    assert errors == {"open": [ErrorCode.OPERATION_NOT_ATTEMPTED], "closed": [TAF]}
    offsets = wire.request(
        25,
        3,
        transactional_id="tx",
        producer_id=txn.producer_id,
        producer_epoch=txn.producer_epoch,
        group_id="g",
    )
    assert offsets.error_code == GAF


def test_admin_apis_need_the_cluster_or_the_topic(secured: AclBroker, wire: WireClient) -> None:
    described = wire.request(
        29,
        3,
        resource_type_filter=1,
        resource_name_filter=None,
        pattern_type_filter=1,
        principal_filter=None,
        host_filter=None,
        operation=1,
        permission_type=1,
    )
    assert described.error_code == CAF
    created = wire.request(
        30,
        3,
        creations=[
            {
                "resource_type": 2,
                "resource_name": "t",
                "resource_pattern_type": 3,
                "principal": ANON,
                "host": "*",
                "operation": 2,
                "permission_type": 3,
            }
        ],
    )
    assert [r.error_code for r in created.results] == [CAF]
    configs = wire.request(
        32,
        4,
        resources=[
            {"resource_type": 2, "resource_name": "closed", "configuration_keys": None},
            {"resource_type": 4, "resource_name": "1", "configuration_keys": None},
        ],
        include_synonyms=False,
        include_documentation=False,
    )
    assert [r.error_code for r in configs.results] == [TAF, CAF]
    allow(secured, ResourceType.TOPIC, "clo", AclOperation.DESCRIBE_CONFIGS)  # LITERAL "clo": no match
    allow(secured, ResourceType.TOPIC, "closed", AclOperation.ALTER_CONFIGS)  # implies DESCRIBE_CONFIGS
    configs = wire.request(
        32,
        4,
        resources=[{"resource_type": 2, "resource_name": "closed", "configuration_keys": None}],
        include_synonyms=False,
        include_documentation=False,
    )
    assert [r.error_code for r in configs.results] == [0] and configs.results[0].configs
    deleted = wire.request(20, 6, topics=[{"name": "closed", "topic_id": None}], timeout_ms=5000)
    assert [r.error_code for r in deleted.responses] == [TAF]
    grown = wire.request(
        37,
        3,
        topics=[{"name": "closed", "count": 3, "assignments": None}],
        timeout_ms=5000,
        validate_only=True,
    )
    assert [r.error_code for r in grown.results] == [TAF]
    allow(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE)
    assert (
        wire.request(
            29,
            3,
            resource_type_filter=1,
            resource_name_filter=None,
            pattern_type_filter=1,
            principal_filter=None,
            host_filter=None,
            operation=1,
            permission_type=1,
        ).error_code
        == 0
    )


def test_list_groups_is_filtered_unless_the_cluster_may_be_described(secured: AclBroker) -> None:
    from confluent_kafka import Consumer

    for group in ("seen", "hidden"):
        consumer = Consumer(secured.confluent("admin", **{"group.id": group}))
        consumer.subscribe(["t"])
        consumer.poll(0.5)
        from confluent_kafka import TopicPartition

        create_topic(secured, f"t-{group}")
        consumer.commit(offsets=[TopicPartition(f"t-{group}", 0, 1)], asynchronous=False)
        consumer.close()
    with WireClient(secured.plaintext) as wire:
        assert wire.request(16, 4, states_filter=[]).groups == []
        allow(secured, ResourceType.GROUP, "se", AclOperation.DESCRIBE)  # a LITERAL name: no match
        grant(secured, ResourceType.GROUP, "se", AclOperation.DESCRIBE, ANON, ResourcePatternType.PREFIXED)
        assert [g.group_id for g in wire.request(16, 4, states_filter=[]).groups] == ["seen"]
        allow(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE)
        assert sorted(g.group_id for g in wire.request(16, 4, states_filter=[]).groups) == ["hidden", "seen"]


def _one_record_batch() -> bytes:
    return batch(1)


def test_authorized_operations_are_the_principal_s(secured: AclBroker, wire: WireClient) -> None:
    read, describe = 3, 8  # the operations' codes (the fields are bit fields: sets of codes here)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.READ)
    allow(secured, ResourceType.GROUP, "g", AclOperation.DESCRIBE)
    metadata = wire.request(
        3,
        10,
        topics=[{"name": "open", "topic_id": None}],
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=True,
        include_topic_authorized_operations=True,
    )
    assert [t.authorized_operations for t in metadata.topics] == [{read, describe}]
    assert metadata.authorized_operations == set()
    groups = wire.request(15, 5, groups=["g"], include_authorized_operations=True)
    assert [(g.error_code, g.authorized_operations) for g in groups.groups] == [(0, {describe})]
    allow(secured, ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE)
    cluster = wire.request(60, 1, include_cluster_authorized_operations=True, endpoint_type=1)
    assert cluster.error_code == 0 and cluster.authorized_operations == {describe}


def test_offset_fetch_v8_answers_each_group(secured: AclBroker, wire: WireClient) -> None:
    allow(secured, ResourceType.GROUP, "mine", AclOperation.DESCRIBE)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
    asked = [{"name": n, "partition_indexes": [0]} for n in ("open", "closed")]
    groups = [{"group_id": "mine", "topics": asked}, {"group_id": "theirs", "topics": asked}]
    response = wire.request(9, 8, groups=groups, require_stable=False)
    by_group = {g.group_id: g for g in response.groups}
    assert by_group["theirs"].error_code == GAF and by_group["theirs"].topics == []
    assert by_group["mine"].error_code == 0
    assert partition_errors(by_group["mine"].topics) == {"open": [0], "closed": [TAF]}


def test_created_topic_configs_need_describe_configs(secured: AclBroker, wire: WireClient) -> None:
    allow(secured, ResourceType.TOPIC, "fresh", AclOperation.CREATE)
    fresh = [
        {"name": "fresh", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
    ]
    created = wire.request(19, 5, topics=fresh, timeout_ms=5000, validate_only=False)
    assert [(t.error_code, t.topic_config_error_code, t.configs) for t in created.topics] == [(0, TAF, [])]
    allow(secured, ResourceType.TOPIC, "fresher", AclOperation.CREATE)
    allow(secured, ResourceType.TOPIC, "fresher", AclOperation.DESCRIBE_CONFIGS)
    fresh[0]["name"] = "fresher"
    created = wire.request(19, 5, topics=fresh, timeout_ms=5000, validate_only=False)
    assert [(t.error_code, t.topic_config_error_code) for t in created.topics] == [(0, 0)]
    assert created.topics[0].configs


def test_share_fetch_needs_the_group_and_each_topic(secured: AclBroker, wire: WireClient) -> None:
    closed = wire.request(
        3, 12, topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    assert closed.topics == []  # nothing described yet: find the topic id as the admin
    with WireClient(secured.plaintext) as probe:
        allow(secured, ResourceType.TOPIC, "closed", AclOperation.DESCRIBE)
        topic_id = (
            probe.request(
                3, 12, topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
            )
            .topics[0]
            .topic_id
        )
    partitions = [{"partition_index": 0, "acknowledgement_batches": []}]
    fetch = dict(
        member_id="m-1",
        share_session_epoch=0,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=10,
        batch_size=10,
        forgotten_topics_data=[],
        topics=[{"topic_id": topic_id, "partitions": partitions}],
    )
    refused = wire.request(78, 1, group_id="sharers", **fetch)
    assert refused.error_code == GAF
    allow(secured, ResourceType.GROUP, "sharers", AclOperation.READ)
    answered = wire.request(78, 1, group_id="sharers", **fetch)
    errors = [(t.topic_id, [p.error_code for p in t.partitions]) for t in answered.responses]
    assert (topic_id, [TAF]) in errors


def test_consumer_group_heartbeat_needs_its_subscribed_topics(secured: AclBroker, wire: WireClient) -> None:
    beat = dict(
        group_id="modern",
        member_id="m-1",
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30000,
        subscribed_topic_names=["open", "closed"],
        server_assignor=None,
        topic_partitions=[],
    )
    assert wire.request(68, 0, **beat).error_code == GAF
    allow(secured, ResourceType.GROUP, "modern", AclOperation.READ)
    allow(secured, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
    refused = wire.request(68, 0, **beat)
    assert refused.error_code == TAF and "closed" in (refused.error_message or "")
    allow(secured, ResourceType.TOPIC, "closed", AclOperation.READ)
    assert wire.request(68, 0, **beat).error_code == 0


def test_more_admin_apis(secured: AclBroker, wire: WireClient) -> None:
    deleted = wire.request(
        21,
        2,
        topics=[{"name": "closed", "partitions": [{"partition_index": 0, "offset": 1}]}],
        timeout_ms=5000,
    )
    assert partition_errors(deleted.topics) == {"closed": [TAF]}
    producers = wire.request(61, 0, topics=[{"name": "closed", "partition_indexes": [0]}])
    assert partition_errors(producers.topics) == {"closed": [TAF]}
    described = wire.request(65, 0, transactional_ids=["tx"])
    assert [(t.transactional_id, t.error_code) for t in described.transaction_states] == [("tx", TXN)]
    assert wire.request(48, 1, components=[], strict=False).error_code == CAF  # DescribeClientQuotas
    assert wire.request(50, 0, users=None).error_code == CAF  # DescribeUserScramCredentials
    allow(secured, ResourceType.TOPIC, "closed", AclOperation.DELETE)
    deleted = wire.request(
        21,
        2,
        topics=[{"name": "closed", "partitions": [{"partition_index": 0, "offset": 1}]}],
        timeout_ms=5000,
    )
    assert partition_errors(deleted.topics) == {"closed": [0]}
