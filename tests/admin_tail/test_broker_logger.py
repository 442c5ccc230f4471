"""BROKER_LOGGER as Kafka serves it: DescribeConfigs lists the loggers in use with their levels (source
DYNAMIC_BROKER_LOGGER_CONFIG), IncrementalAlterConfigs sets and resets a logger's level, and the
broker's log follows; Kafka's refusals with Kafka's messages."""

from __future__ import annotations

import json
from collections.abc import Callable

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, CREATE_TOPICS, BROKER_LOGGER = 32, 44, 19, 8
SET, DELETE, APPEND = 0, 1, 2


def _levels(wire: WireClient) -> dict[str, tuple[str, int]]:
    r = wire.request(
        DESCRIBE_CONFIGS,
        4,
        resources=[dict(resource_type=BROKER_LOGGER, resource_name="1", configuration_keys=None)],
        include_synonyms=False,
        include_documentation=False,
    )
    return {c.name: (c.value, c.config_source) for c in r.results[0].configs}


def _alter(wire: WireClient, *ops: tuple[str, int, str | None]) -> tuple[int, str | None]:
    r = wire.request(
        INCREMENTAL_ALTER_CONFIGS,
        1,
        resources=[
            dict(
                resource_type=BROKER_LOGGER,
                resource_name="1",
                configs=[dict(name=n, config_operation=op, value=v) for n, op, v in ops],
            )
        ],
        validate_only=False,
    )
    return r.responses[0].error_code, r.responses[0].error_message


def _create(wire: WireClient, name: str) -> None:
    topic = dict(name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])
    wire.request(CREATE_TOPICS, 7, topics=[topic], timeout_ms=5000, validate_only=False)


def _events(broker: ProcessBroker, event: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in broker.log_path.read_text().splitlines() if line.startswith("{")]
    return [e for e in lines if e.get("event") == event]


def test_levels_are_listed_set_and_reset(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    with WireClient(broker.bootstrap) as wire:
        _create(wire, "before")
        levels = _levels(wire)
        assert levels["root"] == ("INFO", 6)
        assert levels["kafkito.broker"] == ("INFO", 6)  # in use: the topic was created through it
        assert _alter(wire, ("kafkito.broker", SET, "WARN")) == (ErrorCode.NONE, None)
        _create(wire, "quiet")
        assert _levels(wire)["kafkito.broker"] == ("WARN", 6)
        assert _alter(wire, ("kafkito.broker", DELETE, None)) == (ErrorCode.NONE, None)
        _create(wire, "loud")
        assert _levels(wire)["kafkito.broker"] == ("INFO", 6)
    created = [e["topic"] for e in _events(broker, "topic.created")]
    assert created == ["before", "loud"]  # "quiet" was created while kafkito.broker logged warnings only


def test_kafka_refusals(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    with WireClient(broker.bootstrap) as wire:
        assert _alter(wire, ("no.such.logger", SET, "INFO")) == (
            ErrorCode.INVALID_CONFIG,
            "Logger no.such.logger does not exist!",
        )
        assert _alter(wire, ("root", SET, "LOUD")) == (
            ErrorCode.INVALID_CONFIG,
            "Cannot set the log level of root to LOUD as it is not a supported log level. "
            "Valid log levels are FATAL, ERROR, WARN, INFO, DEBUG, TRACE",
        )
        assert _alter(wire, ("root", DELETE, None)) == (
            ErrorCode.INVALID_REQUEST,
            "Removing the log level of the root logger is not allowed",
        )
        assert _alter(wire, ("root", APPEND, "INFO")) == (
            ErrorCode.INVALID_REQUEST,
            "APPEND operation is not allowed for the BROKER_LOGGER resource",
        )
        assert _levels(wire)["root"] == ("INFO", 6)
