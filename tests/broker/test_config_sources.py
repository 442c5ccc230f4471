"""DescribeConfigs says where a value comes from, as Kafka does: default, broker property, dynamic, topic."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)

from kafkito.broker.cli import _parser, build_config
from kafkito.broker.config import PROPERTIES, Config, default
from kafkito.broker.coordinator import CoordinatorConfig
from kafkito.broker.log.config import TOPIC_DEFAULTS, LogConfig, broker_defaults
from kafkito.broker.offsets import OffsetsConfig
from kafkito.broker.transactions.config import TRANSACTION_STATE_TOPIC_CONFIGS, TransactionConfig
from tests.support.brokers import ThreadBroker


def _describe(admin: AdminClient, resource: ConfigResource) -> dict[str, ConfigEntry]:
    return admin.describe_configs([resource])[resource].result(timeout=10)  # type: ignore[no-any-return]


def test_unset_properties_are_defaults_and_set_ones_static(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    running = broker_factory(log_retention_ms=3_600_000)
    admin = AdminClient({"bootstrap.servers": running.bootstrap})
    admin.create_topics([NewTopic("sources", 1, 1, config={"cleanup.policy": "compact"})])["sources"].result(
        10
    )

    topic = _describe(admin, ConfigResource("topic", "sources"))
    assert topic["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert topic["retention.ms"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert topic["retention.ms"].value == "3600000"
    assert topic["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert topic["segment.bytes"].is_default

    node = _describe(admin, ConfigResource("broker", "1"))
    assert node["log.retention.ms"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert node["num.partitions"].source == ConfigSource.DEFAULT_CONFIG.value


def test_dynamic_broker_config_reaches_topics_without_overrides(broker: ThreadBroker) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("follows", 1, 1)])["follows"].result(10)
    change = ConfigResource(
        "broker",
        "1",
        incremental_configs=[
            ConfigEntry("log.retention.ms", "120000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([change])[change].result(timeout=10)

    node = _describe(admin, ConfigResource("broker", "1"))
    assert node["log.retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    assert _describe(admin, ConfigResource("topic", "follows"))["retention.ms"].value == "120000"
    assert broker.call(lambda: broker.broker.logs.get_log("follows", 0).config.retention_ms) == 120000  # type: ignore[union-attr]


def test_cli_flags_count_as_given_properties() -> None:
    args = _parser().parse_args(["serve", "--port", "0", "--data-dir", "/tmp/x", "--set", "num.partitions=3"])
    config = build_config(args)
    assert {"port", "log.dirs", "num.partitions"} <= config.explicit
    assert config.port == 0 and config.num_partitions == 3


def test_every_typed_view_takes_its_defaults_from_the_one_table() -> None:
    config = Config()
    assert CoordinatorConfig() == CoordinatorConfig.from_config(config)
    assert OffsetsConfig() == OffsetsConfig.from_broker(config)
    assert TransactionConfig() == TransactionConfig.from_config(config)
    state_segment_bytes = default("transaction.state.log.segment.bytes")
    assert TRANSACTION_STATE_TOPIC_CONFIGS["segment.bytes"] == str(state_segment_bytes)
    assert LogConfig() == LogConfig.from_properties(defaults=broker_defaults(config))
    assert TOPIC_DEFAULTS["retention.ms"] == str(default("log.retention.hours") * 3_600_000)
    assert TOPIC_DEFAULTS["max.message.bytes"] == str(default("message.max.bytes"))
    assert all(p.doc and p.name == name for name, p in PROPERTIES.items())
    assert set(config.to_properties()) == set(PROPERTIES)
    config.set("transaction.max.timeout.ms", "1000")
    assert TransactionConfig.from_config(config).max_timeout_ms == 1000
