"""UpdateFeatures as Kafka's controller answers it, through kafka-python's admin client: a safe
downgrade of group.version and transaction.version, refusals with Kafka's messages, levels kept across
a restart and reported by ApiVersions (DescribeFeatures)."""

from __future__ import annotations

from collections.abc import Callable

from kafka import KafkaAdminClient

from tests.support.brokers import ProcessBroker, ThreadBroker
from tests.support.wire import WireClient

UPDATE_FEATURES = 57


def _finalized(bootstrap: str) -> tuple[dict[str, int], int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_features()
    finally:
        admin.close()
    levels = {name: f["finalized"][1] for name, f in described.items() if f.get("finalized")}
    epochs = {f.get("finalized_epoch", -1) for f in described.values()}
    return levels, max(epochs)


def test_downgrades_survive_a_restart(broker_process: Callable[..., ProcessBroker]) -> None:
    broker = broker_process()
    before, epoch = _finalized(broker.bootstrap)
    assert before["transaction.version"] == 2 and before["group.version"] == 1
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    result = admin.update_features(
        {"transaction.version": ("SAFE_DOWNGRADE", 1), "group.version": ("SAFE_DOWNGRADE", 0)}
    )
    admin.close()
    assert set(result) == {"transaction.version", "group.version"}
    broker.restart()
    after, new_epoch = _finalized(broker.bootstrap)
    assert after["transaction.version"] == 1
    assert "group.version" not in after  # a level of 0 is not listed, as Kafka
    assert after["metadata.version"] == before["metadata.version"]
    assert new_epoch > epoch


def _update(bootstrap: str, version: int, **update: object) -> tuple[int, str | None, list[tuple[str, int]]]:
    fields = dict(feature=update["feature"], max_version_level=update["level"])
    if version == 0:
        fields["allow_downgrade"] = update.get("allow_downgrade", False)
    else:
        fields["upgrade_type"] = update.get("upgrade_type", 1)
    with WireClient(bootstrap) as wire:
        extra = {"validate_only": update.get("validate_only", False)} if version >= 1 else {}
        r = wire.request(UPDATE_FEATURES, version, timeout_ms=1000, feature_updates=[fields], **extra)
    results = [(x.feature, x.error_code) for x in r.results] if version < 2 else []
    return r.error_code, r.error_message, results


def test_kafka_refusals(broker: ThreadBroker) -> None:
    prefix = "The update failed for all features since the following feature had an error: "
    code, message, results = _update(broker.bootstrap, 1, feature="group.version", level=0)
    assert code == 95 and results == [("group.version", 95)]
    assert message == prefix + (
        "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature "
        "without setting the upgrade type to either safe or unsafe downgrade."
    )
    code, message, _ = _update(broker.bootstrap, 2, feature="transaction.version", level=3)
    assert (code, message) == (
        95,
        prefix + "Invalid update version 3 for feature transaction.version. Local controller 1 only supports "
        "versions 0-2",
    )
    code, message, _ = _update(broker.bootstrap, 2, feature="no.such.version", level=1)
    assert code == 95 and message is not None and message.endswith("does not support this feature.")
    code, message, _ = _update(broker.bootstrap, 2, feature="metadata.version", level=20, upgrade_type=2)
    assert code == 95 and message is not None and "might delete metadata information" in message
    code, _, _ = _update(
        broker.bootstrap, 1, feature="group.version", level=0, upgrade_type=2, validate_only=True
    )
    assert code == 0
    assert _finalized(broker.bootstrap)[0]["group.version"] == 1  # validate only: unchanged
    code, _, results = _update(broker.bootstrap, 0, feature="group.version", level=0, allow_downgrade=True)
    assert (code, results) == (0, [("group.version", 0)])
    assert "group.version" not in _finalized(broker.bootstrap)[0]


def _heartbeat_error(bootstrap: str) -> int:
    with WireClient(bootstrap) as wire:
        r = wire.request(
            68,
            0,
            group_id="gv",
            member_id="",
            member_epoch=0,
            instance_id=None,
            rack_id=None,
            rebalance_timeout_ms=30000,
            subscribed_topic_names=["t"],
            server_assignor=None,
            topic_partitions=[],
        )
    return int(r.error_code)


def test_group_version_zero_turns_the_consumer_protocol_off(broker: ThreadBroker) -> None:
    assert _heartbeat_error(broker.bootstrap) == 0
    assert _update(broker.bootstrap, 1, feature="group.version", level=0, upgrade_type=2)[0] == 0
    assert _heartbeat_error(broker.bootstrap) == 35  # UNSUPPORTED_VERSION, as Kafka with group.version 0
    assert _update(broker.bootstrap, 1, feature="group.version", level=1)[0] == 0
    assert _heartbeat_error(broker.bootstrap) == 0
