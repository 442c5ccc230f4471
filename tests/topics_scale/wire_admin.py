"""CreateTopics, CreatePartitions and Metadata requests over a plain socket, for the tests of this folder."""

from __future__ import annotations

from typing import Any

from tests.support.wire import WireClient

CREATE_TOPICS, METADATA, CREATE_PARTITIONS = 19, 3, 37


def send_create_topics(client: WireClient, *topics: tuple[str, int], validate_only: bool = False) -> int:
    """CreateTopics v5 of (name, partitions) pairs, sent without waiting; the correlation id."""
    return client.send(
        CREATE_TOPICS,
        5,
        topics=[
            dict(name=name, num_partitions=n, replication_factor=1, assignments=[], configs=[])
            for name, n in topics
        ],
        timeout_ms=120_000,
        validate_only=validate_only,
    )


def create_topics(client: WireClient, *topics: tuple[str, int], validate_only: bool = False) -> list[Any]:
    send_create_topics(client, *topics, validate_only=validate_only)
    return list(client.recv(CREATE_TOPICS, 5).topics)


def send_create_partitions(client: WireClient, *topics: tuple[str, int], validate_only: bool = False) -> int:
    """CreatePartitions v1 growing each named topic to its count."""
    return client.send(
        CREATE_PARTITIONS,
        1,
        topics=[dict(name=name, count=count, assignments=None) for name, count in topics],
        timeout_ms=120_000,
        validate_only=validate_only,
    )


def create_partitions(client: WireClient, *topics: tuple[str, int], validate_only: bool = False) -> list[Any]:
    send_create_partitions(client, *topics, validate_only=validate_only)
    return list(client.recv(CREATE_PARTITIONS, 1).results)


def partition_counts(client: WireClient, *names: str) -> dict[str, int | None]:
    """Metadata v9 of the named topics: each one's partition count, None for an unknown topic."""
    response = client.request(
        METADATA,
        9,
        topics=[dict(name=name) for name in names],
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
    )
    return {t.name: (len(t.partitions) if t.error_code == 0 else None) for t in response.topics}
