"""Configs described as Kafka 4.4 describes them, checked against Kafka's own definitions (the generated
broker/kafka_config_defs.py): every broker config with Kafka's type and update mode and none of
kafkito's own settings; topic configs with their synonyms and sources; the cluster-level
min.insync.replicas a Kafka 4.4 cluster always has; CreateTopics' configs."""

from __future__ import annotations

from typing import Any

from kafkito.broker.handlers.config_resources import java_double, kafka_text
from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS, TOPIC_CONFIG_DEFS
from kafkito.broker.log.config import TOPIC_CONFIGS, TOPIC_DEFAULTS, broker_synonyms
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, CREATE_TOPICS = 32, 44, 19
TOPIC, BROKER = 2, 4
SET, DELETE = 0, 1
TYPE_IDS = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
            "PASSWORD": 9}  # fmt: skip
REMOVED_IN_KAFKA_4 = {
    "message.format.version",
    "message.downconversion.enable",
    "message.timestamp.difference.max.ms",
}


def _describe(
    wire: WireClient, resource_type: int, name: str, keys: list[str] | None = None, version: int = 4
) -> Any:
    r = wire.request(
        DESCRIBE_CONFIGS,
        version,
        resources=[dict(resource_type=resource_type, resource_name=name, configuration_keys=keys)],
        include_synonyms=True,
        include_documentation=True,
    )
    return r.results[0]


def _create(wire: WireClient, name: str, configs: dict[str, str], validate_only: bool = False) -> Any:
    r = wire.request(
        CREATE_TOPICS,
        7,
        topics=[
            dict(name=name, num_partitions=1, replication_factor=1, assignments=[],
                 configs=[dict(name=k, value=v) for k, v in configs.items()])
        ],
        timeout_ms=5000,
        validate_only=validate_only,
    )  # fmt: skip
    return r.topics[0]


def _set(wire: WireClient, resource: str, name: str, op: int, value: str | None) -> Any:
    r = wire.request(
        INCREMENTAL_ALTER_CONFIGS,
        1,
        resources=[dict(resource_type=BROKER, resource_name=resource,
                        configs=[dict(name=name, config_operation=op, value=value)])],
        validate_only=False,
    )  # fmt: skip
    return r.responses[0]


def test_the_topic_table_is_kafkas_log_config() -> None:
    kafka = {name: d for name, d in TOPIC_CONFIG_DEFS.items() if not d.internal}
    ours = {name for name, d in TOPIC_CONFIGS.items() if not d.removed}
    assert ours == set(kafka)
    assert {name for name, d in TOPIC_CONFIGS.items() if d.removed} == REMOVED_IN_KAFKA_4
    for name, d in kafka.items():
        assert (TOPIC_CONFIGS[name].type.name, TOPIC_DEFAULTS[name], broker_synonyms(name)) == (
            d.type,
            d.default,
            d.synonyms,
        ), name


def test_a_broker_lists_every_kafka_config_and_none_of_kafkitos_own(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        result = _describe(wire, BROKER, "1")
    rows = {c.name: c for c in result.configs}
    kafka = {name: d for name, d in BROKER_CONFIG_DEFS.items() if not d.internal}
    assert set(rows) == set(kafka)  # not host, port, group.timeline.max.events, kafkito.*...
    for name, d in kafka.items():
        row = rows[name]
        assert row.config_type == TYPE_IDS[d.type], name
        assert row.read_only is not d.dynamic, name
        assert row.is_sensitive is (d.type == "PASSWORD"), name
        assert bool(row.documentation) is d.documented, name
    assert (
        rows["log.retention.hours"].read_only and not rows["sasl.mechanism.inter.broker.protocol"].read_only
    )
    assert rows["log.cleaner.io.max.bytes.per.second"].value == "1.7976931348623157E308"  # Kafka's default
    assert [(s.name, s.value, s.source) for s in rows["log.retention.hours"].synonyms] == [
        ("log.retention.hours", "168", 5)
    ]
    assert rows["ssl.keystore.password"].value is None


def test_a_topics_configs_name_the_levels_behind_them(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        _create(wire, "levels", {"retention.ms": "60000", "cleanup.policy": "compact"})
        result = _describe(wire, TOPIC, "levels")
        unknown = _describe(wire, TOPIC, "no-such-topic")
    rows = {c.name: c for c in result.configs}
    assert set(rows) == {name for name, d in TOPIC_CONFIG_DEFS.items() if not d.internal}

    def synonyms(name: str) -> list[tuple[str, str | None, int]]:
        return [(s.name, s.value, s.source) for s in rows[name].synonyms]

    assert synonyms("cleanup.policy") == [
        ("cleanup.policy", "compact", 1),
        ("log.cleanup.policy", "delete", 5),
    ]
    assert synonyms("retention.ms") == [("retention.ms", "60000", 1)]  # log.retention.ms is unset
    assert synonyms("segment.ms") == []  # as Kafka: log.roll.ms is unset, log.roll.hours stands behind it
    assert synonyms("max.decompressed.message.bytes") == [("max.decompressed.message.bytes", "2147483639", 5)]
    assert rows["min.insync.replicas"].config_source == 3  # the cluster default Kafka 4.4 always has
    assert synonyms("min.insync.replicas") == [
        ("min.insync.replicas", "1", 3),
        ("min.insync.replicas", "1", 5),
    ]
    assert rows["compression.zstd.level"].config_type == TYPE_IDS["INT"]
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)


def test_create_topics_returns_the_configs_a_validated_topic_would_have(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        validated = _create(wire, "only-checked", {"cleanup.policy": "compact"}, validate_only=True)
        refused = _create(wire, "refused", {"cleanup.policy": "sometimes"})
    configs = {c.name: (c.value, c.config_source) for c in validated.configs}
    assert configs["cleanup.policy"] == ("compact", 1)
    assert configs["min.insync.replicas"] == ("1", 3)
    assert configs["retention.ms"] == ("604800000", 5)
    assert not REMOVED_IN_KAFKA_4 & set(configs)
    assert refused.error_code == ErrorCode.INVALID_CONFIG and list(refused.configs) == []


def test_the_cluster_keeps_its_min_insync_replicas(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        refused = _set(wire, "", "min.insync.replicas", DELETE, None)
        assert refused.error_code == ErrorCode.INVALID_CONFIG
        assert (
            refused.error_message
            == "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
        )
        assert _set(wire, "", "min.insync.replicas", SET, "2").error_code == ErrorCode.NONE
        cluster = _describe(wire, BROKER, "")
        node = _describe(wire, BROKER, "1", ["min.insync.replicas"])
    assert [(c.name, c.value, c.config_source) for c in cluster.configs] == [("min.insync.replicas", "2", 3)]
    (row,) = node.configs
    assert [(s.value, s.source) for s in row.synonyms] == [("2", 3), ("1", 5)]


def test_a_config_kafka_does_not_change_at_run_time_is_refused(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        refused = _set(wire, "1", "log.retention.hours", SET, "24")
        bad_type = _set(wire, "1", "log.cleaner.threads", SET, "many")  # a config kafkito does not read
    assert refused.error_code == ErrorCode.INVALID_REQUEST
    assert refused.error_message == "Cannot update these configs dynamically: Set(log.retention.hours)"
    assert (
        bad_type.error_message
        == "Invalid value many for configuration log.cleaner.threads: Not a number of type INT"
    )


def test_values_are_rendered_as_kafka_renders_them() -> None:
    assert [java_double(x) for x in (0.5, 1e7, 1e-4, 1.7976931348623157e308)] == [
        "0.5", "1.0E7", "1.0E-4", "1.7976931348623157E308"
    ]  # fmt: skip
    assert kafka_text("LIST", "classic, consumer ,share") == "classic,consumer,share"
    assert kafka_text("BOOLEAN", True) == "true" and kafka_text("INT", " 7") == "7"
