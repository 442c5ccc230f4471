"""Per-group configs (GROUP config resource): consumer.session.timeout.ms and
consumer.heartbeat.interval.ms, in the coordinator and through the admin client."""

from __future__ import annotations

import pytest

from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError
from tests.consumer_groups.harness import Harness, Member
from tests.support.brokers import ThreadBroker


def test_overrides_change_the_interval_and_the_session_of_that_group_only() -> None:
    h = Harness()
    h.topics.create("t", 1)
    configs = h.coordinator.group_configs
    configs.alter("g", {"consumer.heartbeat.interval.ms": "6000", "consumer.session.timeout.ms": "50000"}, ())
    assert configs.describe("g") == [
        ("consumer.heartbeat.interval.ms", 6000, True),
        ("consumer.session.timeout.ms", 50000, True),
    ]
    assert configs.describe("other")[1] == ("consumer.session.timeout.ms", 45000, False)
    a, b = Member("a", ("t",)), Member("b", ("t",))
    assert h.join("g", a).heartbeat_interval_ms == 6000
    assert h.join("h", b).heartbeat_interval_ms == 5000
    h.clock.advance(46_000)
    assert "a" in h.group("g").members  # its group's session is 50 s
    assert "b" not in h.group("h").members
    h.clock.advance(5_000)
    assert "a" not in h.group("g").members
    configs.alter("g", {}, ["consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"])
    assert all(not overridden for _, _, overridden in configs.describe("g"))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"consumer.session.timeout.ms": "1000"}, "between"),
        ({"consumer.session.timeout.ms": "70000"}, "between"),
        ({"consumer.heartbeat.interval.ms": "4000"}, "between"),
        ({"consumer.heartbeat.interval.ms": "x"}, "not a number"),
        ({"consumer.unknown": "1"}, "Unknown group config"),
    ],
)
def test_bad_group_configs_are_refused(values: dict[str, str], message: str) -> None:
    configs = Harness().coordinator.group_configs
    with pytest.raises(GroupConfigError, match=message):
        configs.alter("g", values, ())
    assert all(not overridden for _, _, overridden in configs.describe("g"))


def test_group_configs_through_the_admin_client(broker: ThreadBroker) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(
        ResourceType.GROUP,
        "configured",
        incremental_configs=[
            ConfigEntry("consumer.session.timeout.ms", "50000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=10)
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "configured")])
    entries = next(iter(described.values())).result(timeout=10)
    assert entries["consumer.session.timeout.ms"].value == "50000"
    assert entries["consumer.heartbeat.interval.ms"].value == "5000"
    bad = ConfigResource(
        ResourceType.GROUP,
        "configured",
        incremental_configs=[
            ConfigEntry("consumer.session.timeout.ms", "10", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    with pytest.raises(Exception, match="between"):
        next(iter(admin.incremental_alter_configs([bad]).values())).result(timeout=10)
