"""Admin config calls of kafka-clients 4.4: describeConfigs and incrementalAlterConfigs on topics, the
broker and groups (kafka-clients 4 has no legacy alterConfigs)."""

from __future__ import annotations

from typing import Any

from tests.java_admin.conftest import JavaAdmin, unique
from tests.support.waiting import wait_until


def _entry(admin: JavaAdmin, kind: str, name: str, config: str, **want: Any) -> dict[str, Any]:
    """The config entry, once it has the fields of `want` (Kafka's broker applies a change it sent its
    controller a moment after answering, as a newly created topic's configs)."""
    seen: dict[str, Any] = {}

    def described() -> bool:
        answer = admin("describeConfigs", resources=[dict(type=kind, name=name)], names=[config])
        seen.clear()
        seen.update(answer[f"{kind}:{name}"].get("entries", {}).get(config, {}))
        return bool(seen) and all(seen.get(k) == v for k, v in want.items())

    wait_until(described, 60, f"{kind} {name}'s {config} with {want}", detail=lambda: str(seen))
    return seen


def test_topic_configs_set_append_subtract_delete(admin: JavaAdmin) -> None:
    topic = admin.topic()
    assert _entry(admin, "TOPIC", topic, "retention.ms") == {
        "value": "604800000", "source": "DEFAULT_CONFIG", "readOnly": False, "sensitive": False
    }  # fmt: skip
    resource = dict(type="TOPIC", name=topic, ops=[
        dict(name="retention.ms", value="1000", op="SET"),
        dict(name="cleanup.policy", value="compact", op="APPEND"),
    ])  # fmt: skip
    assert admin("incrementalAlterConfigs", resources=[resource]) == {f"TOPIC:{topic}": {}}
    _entry(admin, "TOPIC", topic, "retention.ms", value="1000", source="DYNAMIC_TOPIC_CONFIG")
    _entry(admin, "TOPIC", topic, "cleanup.policy", value="delete,compact", source="DYNAMIC_TOPIC_CONFIG")
    resource = dict(type="TOPIC", name=topic, ops=[
        dict(name="retention.ms", value=None, op="DELETE"),
        dict(name="cleanup.policy", value="delete", op="SUBTRACT"),
    ])  # fmt: skip
    assert admin("incrementalAlterConfigs", resources=[resource]) == {f"TOPIC:{topic}": {}}
    _entry(admin, "TOPIC", topic, "retention.ms", value="604800000", source="DEFAULT_CONFIG")
    _entry(admin, "TOPIC", topic, "cleanup.policy", value="compact")


def test_alter_configs_refusals_and_validate_only(admin: JavaAdmin) -> None:
    topic = admin.topic()
    missing = unique("missing")
    changes = [
        dict(type="TOPIC", name=topic, ops=[dict(name="no.such.config", value="1", op="SET")]),
        dict(type="TOPIC", name=missing, ops=[dict(name="retention.ms", value="1", op="SET")]),
    ]
    refused = admin("incrementalAlterConfigs", resources=changes)
    assert refused[f"TOPIC:{topic}"]["error"] == "InvalidConfigurationException"
    assert refused[f"TOPIC:{missing}"]["error"] == "UnknownTopicOrPartitionException"
    checked = [dict(type="TOPIC", name=topic, ops=[dict(name="retention.ms", value="5000", op="SET")])]
    assert admin("incrementalAlterConfigs", resources=checked, validateOnly=True) == {f"TOPIC:{topic}": {}}
    assert _entry(admin, "TOPIC", topic, "retention.ms")["value"] == "604800000"
    unknown = admin("describeConfigs", resources=[dict(type="TOPIC", name=missing)])[f"TOPIC:{missing}"]
    assert unknown["error"] == "UnknownTopicOrPartitionException"


def test_broker_configs_static_dynamic_and_read_only(admin: JavaAdmin) -> None:
    names = ["log.cleaner.threads", "broker.id", "message.max.bytes"]
    described = admin("describeConfigs", resources=[dict(type="BROKER", name="1")], names=names)["BROKER:1"]
    entries = described["entries"]
    assert entries["broker.id"]["readOnly"] is True and entries["broker.id"]["value"] == "1"
    assert entries["message.max.bytes"] == {
        "value": "1048588", "source": "DEFAULT_CONFIG", "readOnly": False, "sensitive": False
    }  # fmt: skip
    change = [dict(type="BROKER", name="1", ops=[dict(name="log.cleaner.threads", value="2", op="SET")])]
    assert admin("incrementalAlterConfigs", resources=change) == {"BROKER:1": {}}
    _entry(admin, "BROKER", "1", "log.cleaner.threads", value="2", source="DYNAMIC_BROKER_CONFIG")
    change = [dict(type="BROKER", name="1", ops=[dict(name="log.cleaner.threads", value=None, op="DELETE")])]
    assert admin("incrementalAlterConfigs", resources=change) == {"BROKER:1": {}}
    _entry(admin, "BROKER", "1", "log.cleaner.threads", value="1", source="DEFAULT_CONFIG")
    read_only = [dict(type="BROKER", name="1", ops=[dict(name="broker.id", value="7", op="SET")])]
    assert admin("incrementalAlterConfigs", resources=read_only)["BROKER:1"]["error"] == (
        "InvalidRequestException"
    )


def test_group_configs(admin: JavaAdmin) -> None:
    group = unique("configured")
    change = [
        dict(
            type="GROUP", name=group, ops=[dict(name="consumer.session.timeout.ms", value="50000", op="SET")]
        )
    ]
    assert admin("incrementalAlterConfigs", resources=change) == {f"GROUP:{group}": {}}
    _entry(admin, "GROUP", group, "consumer.session.timeout.ms", value="50000", source="DYNAMIC_GROUP_CONFIG")
    bad = [
        dict(type="GROUP", name=group, ops=[dict(name="consumer.session.timeout.ms", value="1", op="SET")])
    ]
    assert admin("incrementalAlterConfigs", resources=bad)[f"GROUP:{group}"]["error"] == (
        "InvalidConfigurationException"
    )
