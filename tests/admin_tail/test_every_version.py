"""Each API added here answers every version it advertises (min to max) with a well-formed response of
that version, and the connection stays open."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkito.broker.handlers import VERSIONS
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

_TOPICS = [dict(name="v", partitions=[dict(partition_index=0, replicas=[1])])]
FIELDS: dict[int, dict[str, Any]] = {
    34: dict(dirs=[dict(path="/nowhere", topics=[dict(name="v", partitions=[0])])]),
    35: dict(topics=None),
    43: dict(election_type=0, topic_partitions=[dict(topic="v", partitions=[0])], timeout_ms=1000),
    45: dict(timeout_ms=1000, allow_replication_factor_change=True, topics=_TOPICS),
    46: dict(timeout_ms=1000, topics=None),
    57: dict(
        timeout_ms=1000,
        feature_updates=[
            dict(feature="group.version", max_version_level=1, allow_downgrade=False, upgrade_type=1)
        ],
        validate_only=True,
    ),
    71: dict(client_instance_id=uuid.UUID(int=0)),
    72: dict(
        client_instance_id=uuid.uuid4(), subscription_id=0, terminating=False, compression_type=0, metrics=b""
    ),
    75: dict(topics=[dict(name="v")], response_partition_limit=10, cursor=None),
}
CASES = [(key, v) for key in sorted(FIELDS) for v in range(VERSIONS[key][0], VERSIONS[key][1] + 1)]


@pytest.mark.parametrize(("api_key", "version"), CASES)
def test_every_version_is_answered(broker: ThreadBroker, api_key: int, version: int) -> None:
    with WireClient(broker.bootstrap) as wire:
        topic = dict(name="v", num_partitions=1, replication_factor=1, assignments=[], configs=[])
        wire.request(19, 7, topics=[topic], timeout_ms=1000, validate_only=False)
        response = wire.request(api_key, version, **FIELDS[api_key])  # decoded as that version's response
        assert response.version == version
        assert wire.request(18, 0).error_code == 0  # still open


def test_describe_topic_partitions_all_topics_and_a_stray_cursor(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        for name, count in (("a-topic", 2), ("b-topic", 3)):
            topic = dict(name=name, num_partitions=count, replication_factor=1, assignments=[], configs=[])
            wire.request(19, 7, topics=[topic], timeout_ms=1000, validate_only=False)
        every = wire.request(75, 0, topics=[], response_partition_limit=3, cursor=None)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in every.topics] == [
            ("a-topic", [0, 1]),
            ("b-topic", [0]),
        ]
        assert (every.next_cursor.topic_name, every.next_cursor.partition_index) == ("b-topic", 1)
        rest = wire.request(75, 0, topics=[], response_partition_limit=3, cursor=every.next_cursor)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in rest.topics] == [
            ("b-topic", [1, 2])
        ]
        assert rest.next_cursor is None
        stray = wire.request(
            75, 0, topics=[dict(name="a-topic")], response_partition_limit=3,
            cursor=dict(topic_name="b-topic", partition_index=0),
        )  # fmt: skip
        assert [(t.name, t.error_code) for t in stray.topics] == [("a-topic", 42)]
