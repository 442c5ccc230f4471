"""Topic admin through confluent-kafka's and kafka-python's admin clients, with real effects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.brokers import ThreadBroker

from .clients import consume_kafka_python, produce_confluent, sample_records

TIMEOUT = 10


@pytest.fixture
def admin(broker: ThreadBroker) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def kp_admin(broker: ThreadBroker) -> Iterator[Any]:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def error_of(future: Any) -> Any:
    """The KafkaError a confluent admin future failed with, or None when it succeeded."""
    from confluent_kafka import KafkaException

    try:
        future.result(TIMEOUT)
    except KafkaException as exc:
        return exc.args[0]
    return None


def partitions_of(admin: Any, topic: str) -> set[int] | None:
    md = admin.list_topics(timeout=TIMEOUT)
    return set(md.topics[topic].partitions) if topic in md.topics else None


# -- confluent-kafka ---------------------------------------------------------------------------------


def test_confluent_create_topics_with_configs_and_errors(admin: Any) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import NewTopic

    futures = admin.create_topics(
        [
            NewTopic("made", 4, 1, config={"retention.ms": "3600000", "cleanup.policy": "compact"}),
            NewTopic("too-replicated", 1, 3),
            NewTopic("bad-config", 1, 1, config={"retention.ms": "soon"}),
            NewTopic("bad/name", 1, 1),
        ]
    )
    assert error_of(futures["made"]) is None
    assert error_of(futures["too-replicated"]).code() == KafkaError.INVALID_REPLICATION_FACTOR
    assert error_of(futures["bad-config"]).code() == KafkaError.INVALID_CONFIG
    assert error_of(futures["bad/name"]).code() == KafkaError.TOPIC_EXCEPTION
    assert partitions_of(admin, "made") == {0, 1, 2, 3}
    assert partitions_of(admin, "too-replicated") is None

    again = admin.create_topics([NewTopic("made", 4, 1)])
    assert error_of(again["made"]).code() == KafkaError.TOPIC_ALREADY_EXISTS
    dry = admin.create_topics([NewTopic("dry-run", 2, 1)], validate_only=True)
    assert error_of(dry["dry-run"]) is None
    assert partitions_of(admin, "dry-run") is None


def test_confluent_describe_and_alter_topic_configs_take_effect(admin: Any, broker: ThreadBroker) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, NewTopic

    admin.create_topics([NewTopic("conf", 1, 1, config={"retention.ms": "3600000"})])["conf"].result(TIMEOUT)
    resource = ConfigResource("topic", "conf")
    described = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert described["retention.ms"].value == "3600000"
    assert described["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert described["max.message.bytes"].value == "1048588"
    assert not described["max.message.bytes"].is_read_only

    change = ConfigResource(
        "topic",
        "conf",
        incremental_configs=[
            ConfigEntry("max.message.bytes", "2000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ],
    )
    admin.incremental_alter_configs([change])[change].result(TIMEOUT)
    described = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert described["max.message.bytes"].value == "2000"
    assert described["retention.ms"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value

    # The new limit applies to the very next produce.
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": False})
    for size in (5000, 100):  # one batch each
        producer.produce("conf", value=b"x" * size, on_delivery=lambda err, msg: errors.append(err))
        producer.flush(TIMEOUT)
    assert [e.code() if e else 0 for e in errors] == [KafkaError.MSG_SIZE_TOO_LARGE, 0]

    # The legacy AlterConfigs replaces every override of the topic.
    legacy = ConfigResource("topic", "conf", set_config={"retention.bytes": "123456"})
    with pytest.warns(DeprecationWarning):  # deprecated in the client, still sent by older tools
        admin.alter_configs([legacy])[legacy].result(TIMEOUT)
    described = admin.describe_configs([resource])[resource].result(TIMEOUT)
    dynamic = {k for k, v in described.items() if v.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
    assert dynamic == {"retention.bytes"}
    assert described["max.message.bytes"].value == "1048588"


def test_confluent_describe_broker_configs_and_cluster(admin: Any, broker: ThreadBroker) -> None:
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource("broker", "1")
    described = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert described["num.partitions"].value == "1"
    assert described["log.dirs"].value == str(broker.config.log_dirs)
    cluster = admin.describe_cluster().result(TIMEOUT)
    assert cluster.cluster_id == broker.broker.cluster_id  # type: ignore[union-attr]
    assert cluster.controller.id == 1
    assert [(n.host, n.port) for n in cluster.nodes] == [("127.0.0.1", broker.port)]


def test_confluent_create_partitions_grows_and_never_shrinks(admin: Any, broker: ThreadBroker) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import NewPartitions, NewTopic

    admin.create_topics([NewTopic("grow", 2, 1)])["grow"].result(TIMEOUT)
    assert error_of(admin.create_partitions([NewPartitions("grow", 5)])["grow"]) is None
    assert partitions_of(admin, "grow") == {0, 1, 2, 3, 4}
    shrink = admin.create_partitions([NewPartitions("grow", 3)])["grow"]
    assert error_of(shrink).code() == KafkaError.INVALID_PARTITIONS
    dry = admin.create_partitions([NewPartitions("grow", 9)], validate_only=True)["grow"]
    assert error_of(dry) is None
    assert partitions_of(admin, "grow") == {0, 1, 2, 3, 4}

    recs = sample_records(50, 5)
    produce_confluent(broker.bootstrap, "grow", recs)
    got = consume_kafka_python(broker.bootstrap, "grow", {4: 10})
    assert got[4] == [r for r in recs if r.partition == 4]


def test_confluent_delete_topics_then_recreate_starts_empty(admin: Any, broker: ThreadBroker) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import NewTopic

    admin.create_topics([NewTopic("doomed", 2, 1)])["doomed"].result(TIMEOUT)
    produce_confluent(broker.bootstrap, "doomed", sample_records(20, 2))
    old_id = broker.call(lambda: broker.broker.logs.topic("doomed").topic_id)  # type: ignore[union-attr]
    assert error_of(admin.delete_topics(["doomed"])["doomed"]) is None
    assert partitions_of(admin, "doomed") is None
    assert not list(broker.config.data_dir.glob("doomed-*"))
    assert error_of(admin.delete_topics(["doomed"])["doomed"]).code() == KafkaError.UNKNOWN_TOPIC_OR_PART

    admin.create_topics([NewTopic("doomed", 1, 1)])["doomed"].result(TIMEOUT)
    info = broker.call(lambda: broker.broker.logs.topic("doomed"))  # type: ignore[union-attr]
    assert info is not None and info.topic_id != old_id
    end = broker.call(lambda: broker.broker.logs.get_log("doomed", 0).log_end_offset)  # type: ignore[union-attr]
    assert end == 0


def test_delete_records_moves_the_log_start_and_consumers_reset(admin: Any, broker: ThreadBroker) -> None:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import NewTopic

    admin.create_topics([NewTopic("trimmed", 1, 1)])["trimmed"].result(TIMEOUT)
    recs = sample_records(100, 1)
    produce_confluent(broker.bootstrap, "trimmed", recs)
    done = admin.delete_records([TopicPartition("trimmed", 0, 40)])
    deleted = next(iter(done.values())).result(TIMEOUT)
    assert deleted.low_watermark == 40

    _kafka_python_reset(broker, recs)
    _confluent_reset(broker, recs)


def _kafka_python_reset(broker: ThreadBroker, recs: list[Any]) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import OffsetOutOfRangeError

    tp = TopicPartition("trimmed", 0)
    strict = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, auto_offset_reset="none", enable_auto_commit=False
    )
    try:
        strict.assign([tp])
        strict.seek(tp, 10)
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(20):
                strict.poll(timeout_ms=500)
    finally:
        strict.close()
    lenient = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    try:
        lenient.assign([tp])
        lenient.seek(tp, 10)
        got: list[Any] = []
        for _ in range(40):
            got += lenient.poll(timeout_ms=500).get(tp, [])
            if len(got) >= 60:
                break
        assert [m.offset for m in got] == list(range(40, 100))
        assert [m.value for m in got] == [r.value for r in recs[40:]]
    finally:
        lenient.close()


def _confluent_reset(broker: ThreadBroker, recs: list[Any]) -> None:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    strict = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "reset",
            "auto.offset.reset": "error",
            "enable.auto.commit": False,
        }
    )
    try:
        strict.assign([TopicPartition("trimmed", 0, 10)])
        codes = set()
        for _ in range(40):
            m = strict.poll(0.25)
            if m is not None and m.error() is not None:
                codes.add(m.error().code())
                break
        assert KafkaError._AUTO_OFFSET_RESET in codes
    finally:
        strict.close()


# -- kafka-python ------------------------------------------------------------------------------------


def test_kafka_python_admin_topic_lifecycle(kp_admin: Any, broker: ThreadBroker) -> None:
    from kafka import TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import InvalidPartitionsError, TopicAlreadyExistsError

    kp_admin.create_topics({"kp": {"num_partitions": 2, "configs": {"segment.bytes": "1048576"}}})
    with pytest.raises(TopicAlreadyExistsError):
        kp_admin.create_topics({"kp": {"num_partitions": 2}})
    kp_admin.create_topics({"kp-dry": {"num_partitions": 2}}, validate_only=True)
    assert "kp" in kp_admin.list_topics() and "kp-dry" not in kp_admin.list_topics()

    kp_admin.create_partitions({"kp": 3})
    with pytest.raises(InvalidPartitionsError):
        kp_admin.create_partitions({"kp": 1})
    [described] = kp_admin.describe_topics(["kp"])
    assert [p["partition_index"] for p in described["partitions"]] == [0, 1, 2]

    resource = ConfigResource(ConfigResourceType.TOPIC, "kp")
    assert kp_admin.describe_configs([resource])["topic"]["kp"]["segment.bytes"]["value"] == "1048576"
    # IncrementalAlterConfigs (the default), then the legacy AlterConfigs which replaces every override.
    kp_admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, "kp", configs={"retention.ms": "777000"})]
    )
    modified = kp_admin.describe_configs([resource])["topic"]["kp"]
    assert {k: v["value"] for k, v in modified.items()} == {
        "segment.bytes": "1048576",
        "retention.ms": "777000",
    }
    # With incremental=False kafka-python sends AlterConfigs carrying the other overrides along.
    kp_admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, "kp", configs={"retention.bytes": "123456"})],
        incremental=False,
    )
    modified = kp_admin.describe_configs([resource])["topic"]["kp"]
    assert {k: v["value"] for k, v in modified.items()} == {
        "segment.bytes": "1048576",
        "retention.ms": "777000",
        "retention.bytes": "123456",
    }
    applied = broker.call(lambda: broker.broker.logs.get_log("kp", 2).config)  # type: ignore[union-attr]
    assert (applied.retention_bytes, applied.retention_ms, applied.segment_bytes) == (123456, 777000, 1048576)

    produce_confluent(broker.bootstrap, "kp", sample_records(30, 3))
    low = kp_admin.delete_records({TopicPartition("kp", 1): 4})
    assert low[TopicPartition("kp", 1)]["low_watermark"] == 4
    kp_admin.delete_topics(["kp"])
    assert "kp" not in kp_admin.list_topics()
