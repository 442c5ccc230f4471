"""The config APIs answer each resource on its own: what they refuse, and with which error and message.

DescribeConfigs, AlterConfigs and IncrementalAlterConfigs share one per-resource result
(broker/handlers/config_resources.py); these pin its answers through the wire.
"""

from __future__ import annotations

from typing import Any

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS, CREATE_TOPICS = 32, 33, 44, 19
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _describe(wire: WireClient, *resources: tuple[int, str, list[str] | None]) -> list[Any]:
    r = wire.request(
        DESCRIBE_CONFIGS,
        4,
        resources=[dict(resource_type=t, resource_name=n, configuration_keys=k) for t, n, k in resources],
        include_synonyms=False,
        include_documentation=False,
    )
    return list(r.results)


def _incremental(
    wire: WireClient, resource_type: int, name: str, *configs: tuple[str, int, str | None]
) -> Any:
    r = wire.request(
        INCREMENTAL_ALTER_CONFIGS,
        1,
        resources=[
            dict(
                resource_type=resource_type,
                resource_name=name,
                configs=[dict(name=c, config_operation=op, value=v) for c, op, v in configs],
            )
        ],
        validate_only=False,
    )
    return r.responses[0]


def _create(wire: WireClient, name: str, configs: dict[str, str]) -> None:
    r = wire.request(
        CREATE_TOPICS,
        7,
        topics=[
            dict(
                name=name,
                num_partitions=1,
                replication_factor=1,
                assignments=[],
                configs=[dict(name=k, value=v) for k, v in configs.items()],
            )
        ],
        timeout_ms=5000,
        validate_only=False,
    )
    assert r.topics[0].error_code == ErrorCode.NONE


def test_describe_configs_answers_each_resource_with_its_own_error(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        _create(wire, "described", {"cleanup.policy": "compact"})
        other_broker, odd_type, missing, logger, keys = _describe(
            wire,
            (BROKER, "7", None),
            (99, "x", None),
            (TOPIC, "no-such-topic", None),
            (BROKER_LOGGER, "1", None),
            (TOPIC, "described", ["cleanup.policy", "not.a.config"]),
        )
    assert (other_broker.error_code, other_broker.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "unexpected broker id '7'",
    )
    assert list(other_broker.configs) == []
    assert (odd_type.error_code, odd_type.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "unsupported resource type 99",
    )
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert list(missing.configs) == []
    assert logger.error_code == ErrorCode.NONE
    assert ("root", "INFO") in [(c.name, c.value) for c in logger.configs]  # the loggers in use
    assert keys.error_code == ErrorCode.NONE
    assert [(c.name, c.value) for c in keys.configs] == [("cleanup.policy", "compact")]


def test_alter_configs_alters_only_topics(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        _create(wire, "replaced", {"cleanup.policy": "compact"})
        r = wire.request(
            ALTER_CONFIGS,
            2,
            resources=[
                dict(
                    resource_type=BROKER, resource_name="1", configs=[dict(name="num.partitions", value="3")]
                ),
                dict(
                    resource_type=TOPIC,
                    resource_name="replaced",
                    configs=[dict(name="retention.ms", value="5000")],
                ),
            ],
            validate_only=False,
        )
        refused, replaced = r.responses
        [described] = _describe(wire, (TOPIC, "replaced", ["cleanup.policy", "retention.ms"]))
    # num.partitions is a static broker config: Kafka refuses to change it at run time
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "Cannot update these configs dynamically: Set(num.partitions)",
    )
    assert (replaced.error_code, replaced.error_message) == (ErrorCode.NONE, None)
    # AlterConfigs replaces every override: cleanup.policy falls back to its default.
    assert {c.name: c.value for c in described.configs} == {
        "cleanup.policy": "delete",
        "retention.ms": "5000",
    }


def test_incremental_alter_configs_operations_and_refusals(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        _create(wire, "listed", {"cleanup.policy": "delete"})
        appended = _incremental(wire, TOPIC, "listed", ("cleanup.policy", APPEND, "compact"))
        [after_append] = _describe(wire, (TOPIC, "listed", ["cleanup.policy"]))
        subtracted = _incremental(wire, TOPIC, "listed", ("cleanup.policy", SUBTRACT, "delete"))
        [after_subtract] = _describe(wire, (TOPIC, "listed", ["cleanup.policy"]))
        unknown_op = _incremental(wire, TOPIC, "listed", ("cleanup.policy", 9, "x"))
        broker_delete = _incremental(wire, BROKER, "1", ("num.partitions", DELETE, None))
        other_broker = _incremental(wire, BROKER, "7", ("num.partitions", SET, "2"))
        bad_property = _incremental(wire, BROKER, "", ("num.partitions", SET, "many"))
        odd_type = _incremental(wire, 99, "x", ("a", SET, "b"))
    assert appended.error_code == subtracted.error_code == ErrorCode.NONE
    assert [c.value for c in after_append.configs] == ["delete,compact"]
    assert [c.value for c in after_subtract.configs] == ["compact"]
    # deleting a dynamic broker config that is not set changes nothing, as in Kafka
    assert (broker_delete.error_code, broker_delete.error_message) == (ErrorCode.NONE, None)
    refusals = [unknown_op, other_broker, bad_property, odd_type]
    assert [r.error_code for r in refusals] == [ErrorCode.INVALID_REQUEST] * 4
    assert [r.error_message for r in refusals] == [
        "unknown config operation 9",
        "unexpected broker id '7'",
        "Cannot update these configs dynamically: Set(num.partitions)",
        "unsupported resource type 99",
    ]
