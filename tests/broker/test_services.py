"""Each broker's handlers see that broker's services, even with several brokers in one process.

The services reach a request's context as class attributes of a subclass bound per broker
(RequestContext.bind); binding a second broker must not change what the first one answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DESCRIBE_CLUSTER, METADATA, CREATE_TOPICS = 60, 3, 19


def _identity(running: ThreadBroker) -> tuple[str, int, list[tuple[int, int]]]:
    with WireClient(running.bootstrap) as wire:
        r = wire.request(DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=False)
    assert r.error_code == ErrorCode.NONE
    return r.cluster_id, r.controller_id, [(b.broker_id, b.port) for b in r.brokers]


def _topic_error(running: ThreadBroker, name: str) -> Any:
    with WireClient(running.bootstrap) as wire:
        r = wire.request(
            METADATA,
            12,
            topics=[dict(name=name, topic_id=None)],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
    return r.topics[0].error_code


def test_two_brokers_in_one_process_answer_with_their_own_services(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    first = broker_factory(node_id=1)
    second = broker_factory(node_id=2)
    with WireClient(first.bootstrap) as wire:
        created = wire.request(
            CREATE_TOPICS,
            7,
            topics=[
                dict(name="only-on-first", num_partitions=1, replication_factor=1, assignments=[], configs=[])
            ],
            timeout_ms=5000,
            validate_only=False,
        )
    assert created.topics[0].error_code == ErrorCode.NONE

    first_port = int(first.bootstrap.rsplit(":", 1)[1])
    second_port = int(second.bootstrap.rsplit(":", 1)[1])
    assert first.broker is not None and second.broker is not None
    assert _identity(first) == (first.broker.cluster_id, 1, [(1, first_port)])
    assert _identity(second) == (second.broker.cluster_id, 2, [(2, second_port)])
    assert first.broker.cluster_id != second.broker.cluster_id
    assert _topic_error(first, "only-on-first") == ErrorCode.NONE
    assert _topic_error(second, "only-on-first") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
