"""Topic set-up for tests that are not about the admin API: confluent-kafka's AdminClient."""

from __future__ import annotations

from tests.support.waiting import DEADLINE_S


def create_topic(bootstrap: str, name: str, partitions: int = 1, **configs: str) -> None:
    """Create `name` (replication factor 1) and return once the broker has answered; topic configs
    are given with dots written as underscores."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = NewTopic(name, partitions, 1, config={k.replace("_", "."): v for k, v in configs.items()})
    admin.create_topics([topic])[name].result(DEADLINE_S)
