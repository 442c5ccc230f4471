"""Configs as the console shows and edits them, through the broker's own DescribeConfigs and
IncrementalAlterConfigs: each config's value, Kafka 4.4's source and synonyms (so a topic's
override is marked with the value it hides), and the edits' refusals as Kafka words them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafkito.broker.console import admin

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

TOPIC = 2
BROKER = 4
SET, DELETE = 0, 1
SOURCES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}
# The sources that mean "set on this resource" rather than inherited: a topic's own override; a
# broker's own dynamic or static value.
OVERRIDES = {TOPIC: {1}, BROKER: {2, 4}}


def _row(entry: Any, resource_type: int) -> dict[str, Any]:
    synonyms = [
        {"name": s.name, "value": s.value, "source": SOURCES.get(s.source, str(s.source))}
        for s in entry.synonyms or ()
    ]
    override = entry.config_source in OVERRIDES[resource_type]
    inherited = synonyms[1] if override and len(synonyms) > 1 else None
    return {
        "name": entry.name,
        "value": entry.value,
        "source": SOURCES.get(entry.config_source, str(entry.config_source)),
        "default": entry.config_source == 5,
        "override": override,
        "inherited": inherited,  # the value (and its level) the override hides; None: Kafka's default
        "read_only": entry.read_only,
        "sensitive": entry.is_sensitive,
        "synonyms": synonyms,
    }


async def describe(broker: Broker, resource_type: int, name: str) -> list[dict[str, Any]]:
    """Every config of a topic or a broker, as DescribeConfigs v4 with synonyms answers it."""
    response = await admin.call(
        broker, 32, 4,
        resources=[{"resource_type": resource_type, "resource_name": name, "configuration_keys": None}],
        include_synonyms=True, include_documentation=False,
    )  # fmt: skip
    (result,) = response.results
    admin.check(result.error_code, result.error_message)
    return [_row(entry, resource_type) for entry in result.configs]


async def alter_topic(
    broker: Broker, topic: str, set_: Mapping[str, str], delete: Sequence[str], *, validate_only: bool = False
) -> dict[str, Any]:
    """SET and DELETE some of a topic's overrides (IncrementalAlterConfigs v1)."""
    configs = [{"name": k, "config_operation": SET, "value": str(v)} for k, v in set_.items()]
    configs += [{"name": k, "config_operation": DELETE, "value": None} for k in delete]
    if not configs:
        raise ValueError("nothing to change: give configs to set or to delete")
    response = await admin.call(
        broker, 44, 1,
        resources=[{"resource_type": TOPIC, "resource_name": topic, "configs": configs}],
        validate_only=validate_only,
    )  # fmt: skip
    (result,) = response.responses
    admin.check(result.error_code, result.error_message)
    return {"topic": topic, "set": dict(set_), "deleted": list(delete), "validate_only": validate_only}
