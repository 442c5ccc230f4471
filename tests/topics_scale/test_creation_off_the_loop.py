"""While a large topic or a large growth is created, other clients are answered; the topic is never
seen half-created, and its name is taken (broker/log/topic_creation.py)."""

from __future__ import annotations

import select

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient
from tests.topics_scale.wire_admin import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    create_topics,
    partition_counts,
    send_create_partitions,
    send_create_topics,
)

LARGE = 1_000


def _answered(client: WireClient, wait: float = 0) -> bool:
    """Whether the broker's answer to `client`'s request has (begun to) arrive, waiting up to `wait` s."""
    return bool(select.select([client.sock], [], [], wait)[0])


def _probe_until_answered(pending: WireClient, probe: WireClient, topic: str) -> list[int | None]:
    """Ask for `topic`'s partition count on `probe` until `pending` has its answer; the counts seen
    before it had. Between probes the answer is waited for a moment (the broker runs in this process:
    probing flat out would only compete with it for the GIL)."""
    seen: list[int | None] = []
    while not _answered(pending, wait=0.01):
        count = partition_counts(probe, topic)[topic]
        if _answered(pending):
            break  # this probe may have been answered after the create: not counted
        seen.append(count)
    return seen


def test_metadata_is_answered_while_a_large_topic_is_created(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap, timeout=120) as creator, WireClient(broker.bootstrap) as probe:
        send_create_topics(creator, ("large", LARGE))
        seen = _probe_until_answered(creator, probe, "large")
        (result,) = creator.recv(CREATE_TOPICS, 5).topics
        assert result.error_code == ErrorCode.NONE
        assert len(seen) >= 3, f"only {len(seen)} Metadata answers came before the CreateTopics answer"
        assert set(seen) <= {None, LARGE}  # never half-created
        assert partition_counts(probe, "large") == {"large": LARGE}


def test_a_topic_being_created_already_exists(broker: ThreadBroker) -> None:
    with (
        WireClient(broker.bootstrap, timeout=120) as creator,
        WireClient(broker.bootstrap, timeout=120) as other,
        WireClient(broker.bootstrap) as probe,
    ):
        send_create_topics(creator, ("taken", LARGE))
        assert partition_counts(probe, "taken") == {"taken": None}
        assert not _answered(creator)  # the creation is under way
        (again,) = create_topics(other, ("taken", 1))
        assert again.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
        (result,) = creator.recv(CREATE_TOPICS, 5).topics
        assert result.error_code == ErrorCode.NONE
        assert partition_counts(probe, "taken") == {"taken": LARGE}


def test_metadata_is_answered_while_a_topic_grows_by_thousands(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap, timeout=120) as admin, WireClient(broker.bootstrap) as probe:
        create_topics(admin, ("grows", 1))
        send_create_partitions(admin, ("grows", 1 + LARGE))
        seen = _probe_until_answered(admin, probe, "grows")
        (result,) = admin.recv(CREATE_PARTITIONS, 1).results
        assert result.error_code == ErrorCode.NONE
        assert len(seen) >= 3, f"only {len(seen)} Metadata answers came before the CreatePartitions answer"
        assert set(seen) <= {1, 1 + LARGE}  # the new partitions appear all at once
        assert partition_counts(probe, "grows") == {"grows": 1 + LARGE}
