"""Deprecated topic configs Kafka 3.9 still accepts (`message.format.version`,
`message.downconversion.enable`, `message.timestamp.difference.max.ms`; Kafka 4 removed them): accepted,
described only for a topic that sets one (Kafka 4.4 lists none of them), and a warning names what
replaces them."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from tests.support.brokers import ProcessBroker, ThreadBroker


def test_deprecated_configs_are_accepted_with_a_warning(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic("old-style", 1, 1, config={"message.format.version": "2.8", "retention.ms": "60000"})
    client.create_topics([topic])["old-style"].result(timeout=30)
    resource = ConfigResource("topic", "old-style", set_config={"message.downconversion.enable": "false"})
    client.alter_configs([resource])[resource].result(timeout=30)
    described = client.describe_configs([ConfigResource("topic", "old-style")])
    entries = next(iter(described.values())).result(timeout=30)
    assert entries["message.downconversion.enable"].value == "false"
    assert "message.format.version" not in entries  # legacy AlterConfigs replaced every override
    assert "message.timestamp.difference.max.ms" not in entries  # never set: not a Kafka 4.4 config
    lines = [json.loads(line) for line in broker.log_path.read_text().splitlines() if line.startswith("{")]
    warned = {e["config"]: e for e in lines if e.get("event") == "topic.config_deprecated"}
    assert set(warned) == {"message.format.version", "message.downconversion.enable"}
    assert warned["message.format.version"]["level"] == "warning"


def test_a_bad_value_of_a_deprecated_config_is_still_refused(broker: ThreadBroker) -> None:
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic("bad-old", 1, 1, config={"message.downconversion.enable": "sometimes"})
    with pytest.raises(Exception) as refused:
        client.create_topics([topic])["bad-old"].result(timeout=30)
    assert refused.value.args[0].name() == "INVALID_CONFIG"
