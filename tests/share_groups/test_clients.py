"""Share groups with real clients: confluent-kafka's ShareConsumer (librdkafka 2.16) joins through
ShareGroupHeartbeat v1 and consumes through S-DATA's ShareFetch; the admin client sets share.* group
configs; the offset APIs describe, reset and delete a group's start offsets once it is empty."""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkito.protocol.errors import ErrorCode
from tests.share_groups.test_wire import DESCRIBE
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient


def _set_group_config(bootstrap: str, group: str, name: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=10)


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % 2)
    assert producer.flush(10) == 0


def _describe(bootstrap: str, group: str) -> Any:
    with WireClient(bootstrap) as client:
        return client.request(DESCRIBE, 1, group_ids=[group], include_authorized_operations=False).groups[0]


def test_group_configs_through_the_admin_client(broker: ThreadBroker) -> None:
    _set_group_config(broker.bootstrap, "cfg", "share.auto.offset.reset", "earliest")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "cfg")])
    entries = next(iter(described.values())).result(timeout=10)
    assert entries["share.auto.offset.reset"].value == "earliest"
    assert entries["share.session.timeout.ms"].value == "45000"
    assert entries["consumer.session.timeout.ms"].value == "45000"
    with pytest.raises(Exception, match="must be one of"):
        _set_group_config(broker.bootstrap, "cfg", "share.auto.offset.reset", "sometime")
    with pytest.raises(Exception, match="between"):
        _set_group_config(broker.bootstrap, "cfg", "share.record.lock.duration.ms", "1000")


def test_two_share_consumers_share_the_partitions_then_offsets_are_reset(broker: ThreadBroker) -> None:
    topic, group = "share-clients", f"sc-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap, topic, 2)
    _produce(broker.bootstrap, topic, 20)
    _set_group_config(broker.bootstrap, group, "share.auto.offset.reset", "earliest")
    config = {"bootstrap.servers": broker.bootstrap, "group.id": group}
    consumers = [ShareConsumer(config), ShareConsumer(config)]
    seen: list[bytes] = []
    try:
        for consumer in consumers:
            consumer.subscribe([topic])

        def everything_consumed() -> bool:
            for consumer in consumers:
                for message in consumer.poll(0.2) or []:
                    if message.error() is None:
                        seen.append(message.value())
            return len(seen) >= 20

        wait_until(everything_consumed, what="20 records consumed by the share group")
        assert sorted(seen) == sorted(f"v{i}".encode() for i in range(20))
        group_view = _describe(broker.bootstrap, group)
        assert group_view.group_state == "Stable" and len(group_view.members) == 2
        # A member that has not heartbeated since the other joined still holds both partitions.
        members = group_view.members
        assigned = {p for m in members for t in m.assignment.topic_partitions for p in t.partitions}
        assert assigned == {0, 1}
        with WireClient(broker.bootstrap) as client:
            busy = client.request(91, 0, group_id=group, topics=[])
            assert (busy.error_code, busy.error_message) == (
                ErrorCode.NON_EMPTY_GROUP,
                "The group is not empty.",
            )
            busy = client.request(92, 0, group_id=group, topics=[dict(topic_name=topic)])
            assert busy.error_code == ErrorCode.NON_EMPTY_GROUP
    finally:
        for consumer in consumers:
            consumer.close()
    # Closing leaves the group (member epoch -1): it is empty at once.
    wait_until(lambda: _describe(broker.bootstrap, group).group_state == "Empty", what="the group empty")

    with WireClient(broker.bootstrap) as client:
        described = client.request(90, 1, groups=[dict(group_id=group, topics=None)]).groups[0]
        assert described.error_code == ErrorCode.NONE
        (answer,) = described.topics
        assert answer.topic_name == topic and sorted(p.partition_index for p in answer.partitions) == [0, 1]
        assert all(p.start_offset >= 0 and p.error_code == 0 for p in answer.partitions)
        reset = [dict(topic_name=topic, partitions=[dict(partition_index=0, start_offset=3)])]
        altered = client.request(91, 0, group_id=group, topics=reset)
        assert altered.error_code == ErrorCode.NONE
        assert altered.responses[0].partitions[0].error_code == ErrorCode.NONE
        asked = [dict(topic_name=topic, partitions=[0])]
        again = client.request(90, 1, groups=[dict(group_id=group, topics=asked)]).groups[0]
        assert again.topics[0].partitions[0].start_offset == 3
        assert again.topics[0].partitions[0].lag == 7  # 10 records on partition 0
        deleted = client.request(92, 0, group_id=group, topics=[dict(topic_name=topic)])
        assert (deleted.error_code, deleted.responses[0].error_code) == (ErrorCode.NONE, ErrorCode.NONE)
        gone = client.request(90, 0, groups=[dict(group_id=group, topics=asked)]).groups[0]
        assert gone.topics[0].partitions[0].start_offset == -1
        assert client.request(90, 0, groups=[dict(group_id=group, topics=None)]).groups[0].topics == []


_MEMBER_SCRIPT = """
import sys, time
from confluent_kafka import ShareConsumer
c = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2]})
c.subscribe([sys.argv[3]])
while True:
    c.poll(0.5)
"""


def test_a_killed_share_consumer_is_fenced_by_its_session_timeout(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    broker = broker_factory(group_share_session_timeout_ms=3000, group_share_min_session_timeout_ms=1000)
    topic, group = "share-killed", "killed"
    create_topic(broker.bootstrap, topic, 2)
    killed = subprocess.Popen([sys.executable, "-c", _MEMBER_SCRIPT, broker.bootstrap, group, topic])
    survivor = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        survivor.subscribe([topic])

        def members() -> int:
            survivor.poll(0.2)
            return len(_describe(broker.bootstrap, group).members)

        wait_until(lambda: members() == 2, what="both share consumers in the group")
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        wait_until(lambda: members() == 1, what="the killed member fenced")
        (member,) = _describe(broker.bootstrap, group).members
        wait_until(
            lambda: (survivor.poll(0.2), len(_partitions_of(broker.bootstrap, group)) == 2)[1],
            what="the survivor given both partitions",
        )
        assert member.member_epoch >= 1
    finally:
        if killed.poll() is None:
            killed.kill()
        survivor.close()


def _partitions_of(bootstrap: str, group: str) -> set[int]:
    return {
        p
        for m in _describe(bootstrap, group).members
        for t in m.assignment.topic_partitions
        for p in t.partitions
    }
