"""Dynamic broker configs (KIP-226) as Kafka applies them: confluent-kafka's admin client alters a
broker config, topics without an override follow at once, the change survives a restart and
DescribeConfigs reports its source; read-only configs are refused with Kafka's message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)

from tests.support.brokers import ProcessBroker, ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

INCREMENTAL_ALTER_CONFIGS, BROKER, SET = 44, 4, 0


def _describe(client: AdminClient, resource: ConfigResource) -> dict[str, ConfigEntry]:
    return dict(next(iter(client.describe_configs([resource]).values())).result(timeout=30))


def _alter(client: AdminClient, resource: ConfigResource) -> None:
    client.incremental_alter_configs([resource])[resource].result(timeout=30)


def test_a_broker_config_survives_a_restart(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    client.create_topics([NewTopic("follows", 1, 1)])["follows"].result(timeout=30)
    node = ConfigResource("broker", "1")
    _alter(
        client,
        ConfigResource(
            "broker",
            "1",
            incremental_configs=[
                ConfigEntry("log.retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
                ConfigEntry("num.io.threads", "16", incremental_operation=AlterConfigOpType.SET),
            ],
        ),
    )
    # the cluster-wide default (an empty name: confluent-kafka cannot name it, kafka-python can)
    assert _raw_set(broker.bootstrap, "", "message.max.bytes", "2000000") == (0, None)
    for restarted in (False, True):
        if restarted:
            broker.restart()
            client = AdminClient({"bootstrap.servers": broker.bootstrap})
        entries = _describe(client, node)
        assert entries["log.retention.ms"].value == "3600000"
        assert entries["log.retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
        assert entries["num.io.threads"].value == "16"  # accepted and kept, as Kafka keeps it
        assert entries["message.max.bytes"].value == "2000000"
        assert entries["message.max.bytes"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
        assert entries["num.partitions"].source == ConfigSource.DEFAULT_CONFIG.value
        assert entries["num.partitions"].is_read_only and not entries["log.retention.ms"].is_read_only
        # min.insync.replicas: a Kafka 4.4 cluster's default always holds it
        assert _raw_default(broker.bootstrap) == [
            ("message.max.bytes", "2000000", 3),
            ("min.insync.replicas", "1", 3),
        ]
        topic = _describe(client, ConfigResource("topic", "follows"))
        assert topic["retention.ms"].value == "3600000"  # the topic follows the broker default
        assert topic["max.message.bytes"].value == "2000000"

    _alter(
        client,
        ConfigResource(
            "broker",
            "1",
            incremental_configs=[
                ConfigEntry("log.retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)
            ],
        ),
    )
    broker.restart()
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    entries = _describe(client, node)
    # unset again (log.retention.hours rules): listed with no value, as Kafka lists it
    assert entries["log.retention.ms"].value is None
    assert entries["log.retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    assert _describe(client, ConfigResource("topic", "follows"))["retention.ms"].value == "604800000"


def _raw_default(bootstrap: str) -> list[tuple[str, str, int]]:
    """The cluster default broker resource as DescribeConfigs lists it: (name, value, source)."""
    with WireClient(bootstrap) as wire:
        r = wire.request(
            32,
            4,
            resources=[dict(resource_type=BROKER, resource_name="", configuration_keys=None)],
            include_synonyms=False,
            include_documentation=False,
        )
    return [(c.name, c.value, c.config_source) for c in r.results[0].configs]


def _raw_set(bootstrap: str, resource: str, name: str, value: str) -> tuple[int, str | None]:
    with WireClient(bootstrap) as wire:
        r = wire.request(
            INCREMENTAL_ALTER_CONFIGS,
            1,
            resources=[
                dict(
                    resource_type=BROKER,
                    resource_name=resource,
                    configs=[dict(name=name, config_operation=SET, value=value)],
                )
            ],
            validate_only=False,
        )
    (result,) = r.responses
    return result.error_code, result.error_message


@pytest.mark.parametrize(
    ("name", "value", "resource", "message"),
    [
        ("log.dirs", "/elsewhere", "1", "Cannot update these configs dynamically: Set(log.dirs)"),
        ("num.partitions", "3", "", "Cannot update these configs dynamically: Set(num.partitions)"),
        (
            "listeners",
            "PLAINTEXT://:9093",
            "",
            "Cannot update these configs at default cluster level, broker id must be specified: "
            "Set(listeners)",
        ),
        (
            "ssl.keystore.location",
            "/k",
            "1",
            "These security configs can be dynamically updated only per-listener using the listener "
            "prefix: Set(ssl.keystore.location)",
        ),
        ("log.retention.ms", "soon", "1", "Invalid value soon for configuration log.retention.ms"),
    ],
)
def test_kafka_refusals(broker: ThreadBroker, name: str, value: str, resource: str, message: str) -> None:
    code, text = _raw_set(broker.bootstrap, resource, name, value)
    assert code == 42  # INVALID_REQUEST
    assert text is not None and text.startswith(message)


def test_a_bad_log_default_is_refused_and_nothing_changes(broker: ThreadBroker) -> None:
    code, text = _raw_set(broker.bootstrap, "1", "log.cleanup.policy", "forever")
    assert code == 42 and text is not None and "cleanup.policy" in text
    assert broker.broker is not None
    assert broker.broker.config.log_cleanup_policy == "delete"


def _talks(bootstrap: str) -> bool:
    """A new connection is admitted and answered."""
    try:
        with WireClient(bootstrap) as wire:
            return bool(wire.request(18, 0).error_code == 0)
    except (ConnectionError, OSError):
        return False


def test_max_connections_per_ip_applies_at_once(broker: ThreadBroker) -> None:
    assert _raw_set(broker.bootstrap, "1", "max.connections.per.ip", "2") == (0, None)
    with WireClient(broker.bootstrap) as first, WireClient(broker.bootstrap) as second:
        assert first.request(18, 0).error_code == 0 and second.request(18, 0).error_code == 0
        with WireClient(broker.bootstrap) as third:
            assert third.is_closed_by_peer()  # refused: the third from this address
        first.close()
        wait_until(lambda: _talks(broker.bootstrap), 30, "a connection admitted once the first is gone")
    assert _raw_set(broker.bootstrap, "1", "max.connections.per.ip", "3") == (0, None)
    with WireClient(broker.bootstrap) as a, WireClient(broker.bootstrap) as b:
        assert a.request(18, 0).error_code == 0 and b.request(18, 0).error_code == 0
        wait_until(lambda: _talks(broker.bootstrap), 30, "a third connection under the raised limit")


def test_synonyms_show_every_level_in_force_order(broker_factory: Callable[..., ThreadBroker]) -> None:
    broker = broker_factory(log_retention_ms=7200000)  # a static value
    assert _raw_set(broker.bootstrap, "", "log.retention.ms", "5400000") == (0, None)
    assert _raw_set(broker.bootstrap, "1", "log.retention.ms", "3600000") == (0, None)
    with WireClient(broker.bootstrap) as wire:
        r = wire.request(
            32,
            4,
            resources=[
                dict(resource_type=BROKER, resource_name="1", configuration_keys=["log.retention.ms"])
            ],
            include_synonyms=True,
            include_documentation=False,
        )
        bare = wire.request(
            32,
            4,
            resources=[
                dict(resource_type=BROKER, resource_name="1", configuration_keys=["log.retention.ms"])
            ],
            include_synonyms=False,
            include_documentation=False,
        )
    (entry,) = r.results[0].configs
    assert (entry.value, entry.config_source) == ("3600000", 2)
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("log.retention.ms", "3600000", 2),
        ("log.retention.ms", "5400000", 3),
        ("log.retention.ms", "7200000", 4),
        ("log.retention.hours", "168", 5),  # what stands in for it, as Kafka lists it
    ]
    assert list(bare.results[0].configs[0].synonyms) == []


def test_a_change_that_cannot_be_saved_is_a_storage_error_and_changes_nothing(broker: ThreadBroker) -> None:
    assert broker.broker is not None
    blocker = broker.broker.config.data_dir / "dynamic-state.json"
    blocker.mkdir()  # the state file cannot be replaced now
    code, message = _raw_set(broker.bootstrap, "1", "log.retention.ms", "1000")
    assert code == 56 and message is not None and "could not save" in message  # KAFKA_STORAGE_ERROR
    with WireClient(broker.bootstrap) as wire:
        features = wire.request(
            57, 1, timeout_ms=1000, validate_only=False,
            feature_updates=[dict(feature="group.version", max_version_level=0, upgrade_type=2)],
        )  # fmt: skip
    assert features.error_code == 56
    blocker.rmdir()
    assert broker.broker.config.log_retention_ms is None  # unchanged
    assert _raw_set(broker.bootstrap, "1", "log.retention.ms", "1000") == (0, None)
