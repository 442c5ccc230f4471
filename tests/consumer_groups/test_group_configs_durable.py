"""Group configs (GROUP resources) outlive a restart, a SIGKILL and the group's deletion, as Kafka's
ConfigRecords do: saved in the data dir's dynamic state before they apply, restored at start."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError
from kafkito.broker.durable_group_configs import DurableGroupConfigs
from kafkito.broker.dynamic_state import FILE_NAME, DynamicStateStore
from kafkito.broker.log.errors import KafkaStorageError
from tests.consumer_groups.harness import Harness
from tests.support.admin import create_topic
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until

SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE


def _alter(bootstrap: str, group: str, *entries: tuple[str, str | None, Any]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = [ConfigEntry(name, value, incremental_operation=op) for name, value, op in entries]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=configs)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=10)


def _described(bootstrap: str, group: str) -> dict[str, tuple[str, bool]]:
    """name -> (value, set for this group rather than the broker's default)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = next(iter(admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()))
    return {
        name: (entry.value, entry.source == 8)  # GROUP_CONFIG, else DEFAULT_CONFIG
        for name, entry in entries.result(timeout=10).items()
    }


def test_group_configs_survive_a_kill_and_a_restart(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    _alter(
        broker.bootstrap, "orders",
        ("consumer.session.timeout.ms", "50000", SET), ("consumer.heartbeat.interval.ms", "6000", SET),
    )  # fmt: skip
    _alter(broker.bootstrap, "orders", ("consumer.heartbeat.interval.ms", None, DELETE))
    _alter(broker.bootstrap, "queue", ("share.auto.offset.reset", "earliest", SET))
    expected = {
        "orders": {
            "consumer.session.timeout.ms": ("50000", True),
            "consumer.heartbeat.interval.ms": ("5000", False),
        },
        "queue": {
            "share.auto.offset.reset": ("earliest", True),
            "consumer.session.timeout.ms": ("45000", False),
        },
    }

    def check() -> None:
        for group, values in expected.items():
            described = _described(broker.bootstrap, group)
            assert {name: described[name] for name in values} == values, group

    check()
    broker.kill()  # SIGKILL: an acknowledged change is on disk already
    broker.start()
    check()
    broker.restart()
    check()


def test_a_share_group_starts_where_its_saved_config_says_after_a_kill(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    """The config's effect, not just its description: `share.auto.offset.reset=earliest`, set before a
    SIGKILL, makes the group's first member read the records that were there before it (the default,
    latest, would give it none of them)."""
    broker = broker_process()
    topic, group = "jobs", f"workers-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce(topic, value=f"job-{i}".encode())
    assert producer.flush(10) == 0
    _alter(broker.bootstrap, group, ("share.auto.offset.reset", "earliest", SET))
    broker.kill()
    broker.start()
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    seen: list[bytes] = []
    try:
        consumer.subscribe([topic])

        def all_read() -> bool:
            seen.extend(m.value() for m in consumer.poll(0.2) or [] if m.error() is None)
            return len(seen) >= 10

        wait_until(all_read, what="the ten records from before the member joined")
    finally:
        consumer.close()
    assert sorted(seen) == sorted(f"job-{i}".encode() for i in range(10))


def test_a_change_that_cannot_be_saved_changes_nothing(tmp_path: Path) -> None:
    store = DynamicStateStore(tmp_path)
    durable = DurableGroupConfigs(store)
    configs = Harness().coordinator.all_group_configs
    durable.alter(configs, "g", {"consumer.session.timeout.ms": "50000"}, ())
    (tmp_path / (FILE_NAME + ".tmp")).mkdir()  # the atomic rewrite cannot create its temporary file
    with pytest.raises(KafkaStorageError):
        durable.alter(configs, "g", {"consumer.session.timeout.ms": "55000"}, ())
    with pytest.raises(KafkaStorageError):
        durable.alter(configs, "g", {}, ["consumer.session.timeout.ms"])
    assert ("consumer.session.timeout.ms", 50000, True) in configs.describe("g")
    assert durable.saved == {"g": {"consumer.session.timeout.ms": "50000"}}
    assert json.loads((tmp_path / FILE_NAME).read_text())["group_configs"] == durable.saved


def test_a_refused_or_validate_only_change_is_not_saved(tmp_path: Path) -> None:
    durable = DurableGroupConfigs(DynamicStateStore(tmp_path))
    configs = Harness().coordinator.all_group_configs
    with pytest.raises(GroupConfigError):
        durable.alter(configs, "g", {"consumer.session.timeout.ms": "10"}, ())
    durable.alter(configs, "g", {"share.auto.offset.reset": "earliest"}, (), validate_only=True)
    assert durable.saved == {}
    assert not (tmp_path / FILE_NAME).exists()
    assert all(not overridden for _, _, overridden in configs.describe("g"))


def test_deleting_every_override_forgets_the_group(tmp_path: Path) -> None:
    durable = DurableGroupConfigs(DynamicStateStore(tmp_path))
    configs = Harness().coordinator.all_group_configs
    durable.alter(configs, "g", {"share.auto.offset.reset": "earliest"}, ())
    durable.alter(configs, "g", {}, ["share.auto.offset.reset"])
    assert DurableGroupConfigs(DynamicStateStore(tmp_path)).saved == {}


def test_a_saved_value_the_new_bounds_refuse_is_left_out_and_the_others_restored(tmp_path: Path) -> None:
    saved = {
        "g": {
            "consumer.session.timeout.ms": "50000",
            "consumer.heartbeat.interval.ms": "6000",
            "share.auto.offset.reset": "earliest",
        }
    }
    (tmp_path / FILE_NAME).write_text(json.dumps({"group_configs": saved}))
    harness = Harness(CoordinatorConfig(group_consumer_max_session_timeout_ms=48_000))
    DurableGroupConfigs(DynamicStateStore(tmp_path)).restore(lambda: harness.coordinator.all_group_configs)
    described = {
        name: (value, overridden)
        for name, value, overridden in harness.coordinator.all_group_configs.describe("g")
    }
    assert described["consumer.session.timeout.ms"] == (45000, False)
    assert described["consumer.heartbeat.interval.ms"] == (6000, True)
    assert described["share.auto.offset.reset"] == ("earliest", True)
