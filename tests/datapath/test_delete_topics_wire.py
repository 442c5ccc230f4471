"""DeleteTopics refusing a topic that does not exist, over the wire, worded as Kafka 4.4's controller
words it: the error's own description as the message (v5+), by name and by id."""

from __future__ import annotations

import uuid

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DELETE_TOPICS = 20


@pytest.mark.parametrize("version", [5, 6])
def test_an_unknown_name_is_refused_with_kafkas_message(broker: ThreadBroker, version: int) -> None:
    topics = (
        {"topics": [{"name": "never-made", "topic_id": None}]}
        if version >= 6
        else {"topic_names": ["never-made"]}
    )
    with WireClient(broker.bootstrap) as c:
        answer = c.request(DELETE_TOPICS, version, timeout_ms=5000, **topics).responses[0]
    assert (answer.name, answer.error_code) == ("never-made", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert answer.error_message == "This server does not host this topic-partition."


def test_an_unknown_id_is_refused_with_kafkas_message(broker: ThreadBroker) -> None:
    unknown = uuid.UUID("0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f")
    with WireClient(broker.bootstrap) as c:
        answer = c.request(DELETE_TOPICS, 6, timeout_ms=5000, topics=[{"name": None, "topic_id": unknown}])
    (result,) = answer.responses
    assert (result.name, result.topic_id, result.error_code) == (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID)
    assert result.error_message == "This server does not host this topic ID."
