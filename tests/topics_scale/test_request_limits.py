"""A CreateTopics or CreatePartitions past what Kafka's controller creates in one request is refused at
once, with Kafka's error, and creates nothing (broker/handlers/batch_limits.py)."""

from __future__ import annotations

from pathlib import Path

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient
from tests.topics_scale.wire_admin import create_partitions, create_topics, partition_counts

TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


def _partition_dirs(broker: ThreadBroker, topic: str) -> list[Path]:
    return sorted(Path(broker.config.log_dirs).glob(f"{topic}-*"))


def test_create_topics_of_a_million_partitions_is_refused_at_once(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        (result,) = create_topics(client, ("huge", 1_000_000))
        assert (result.error_code, result.error_message) == (ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS)
        assert partition_counts(client, "huge") == {"huge": None}
    assert _partition_dirs(broker, "huge") == []


def test_topics_that_ask_for_more_than_ten_thousand_partitions_together_are_all_refused(
    broker: ThreadBroker,
) -> None:
    with WireClient(broker.bootstrap) as client:
        results = create_topics(client, ("half-a", 6_000), ("half-b", 6_000), ("small", 1))
        assert [(r.name, r.error_code, r.error_message) for r in results] == [
            (name, ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS) for name in ("half-a", "half-b", "small")
        ]
        validated = create_topics(client, ("half-a", 6_000), ("half-b", 6_000), validate_only=True)
        assert {r.error_code for r in validated} == {ErrorCode.POLICY_VIOLATION}
        assert partition_counts(client, "half-a", "half-b", "small") == dict.fromkeys(
            ("half-a", "half-b", "small")
        )
    assert _partition_dirs(broker, "half-a") == _partition_dirs(broker, "small") == []


def test_a_topic_of_ten_thousand_partitions_is_one_record_too_many(broker: ThreadBroker) -> None:
    """Its TopicRecord and 10,000 PartitionRecords pass Kafka's bound of 10,000 records per request."""
    with WireClient(broker.bootstrap) as client:
        (result,) = create_topics(client, ("ten-k", 10_000), validate_only=True)
        assert (result.error_code, result.error_message) == (ErrorCode.POLICY_VIOLATION, TOO_MANY_RECORDS)
        (result,) = create_topics(client, ("ten-k", 9_999), validate_only=True)
        assert result.error_code == ErrorCode.NONE


def test_create_partitions_past_the_bound_is_refused_and_adds_none(broker: ThreadBroker) -> None:
    """Kafka answers the topic that overflows, and every later one that adds any, UNKNOWN_SERVER_ERROR."""
    with WireClient(broker.bootstrap) as client:
        create_topics(client, ("fits", 1), ("overflows", 1), ("after", 1))
        results = create_partitions(client, ("fits", 5), ("overflows", 1_000_000), ("after", 2))
        assert [(r.name, r.error_code, r.error_message) for r in results] == [
            ("fits", ErrorCode.NONE, None),
            ("overflows", ErrorCode.UNKNOWN_SERVER_ERROR, None),
            ("after", ErrorCode.UNKNOWN_SERVER_ERROR, None),
        ]
        counts = partition_counts(client, "fits", "overflows", "after")
        assert counts == {"fits": 5, "overflows": 1, "after": 1}
    assert len(_partition_dirs(broker, "overflows")) == 1
