"""The topics a consumer group coordinator sees: an injected view (name ↔ id, partition counts).

The broker adapts its topic metadata to `TopicsView` (`broker.services`); tests use `InMemoryTopics`.
The coordinator is told of changes through `GroupCoordinator.on_topics_changed`, which bumps the
epoch of the groups subscribed to a topic that appeared, vanished or grew.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import NamedTuple, Protocol


class TopicInfo(NamedTuple):
    topic_id: uuid.UUID
    name: str
    num_partitions: int


class TopicsView(Protocol):
    """What the consumer group coordinator asks about topics."""

    def by_name(self, name: str) -> TopicInfo | None:
        """The topic of that name, or None when it does not exist."""
        ...

    def by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        """The topic of that id, or None when it does not exist."""
        ...

    def names(self) -> Iterable[str]:
        """Every topic name (regular expressions are matched against them)."""
        ...


class InMemoryTopics:
    """A `TopicsView` over a dict (tests, and a coordinator built without a broker)."""

    def __init__(self) -> None:
        self._by_name: dict[str, TopicInfo] = {}
        self._by_id: dict[uuid.UUID, TopicInfo] = {}

    def by_name(self, name: str) -> TopicInfo | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return self._by_id.get(topic_id)

    def names(self) -> Iterable[str]:
        return list(self._by_name)

    def create(self, name: str, partitions: int, topic_id: uuid.UUID | None = None) -> TopicInfo:
        info = TopicInfo(topic_id or uuid.uuid4(), name, partitions)
        self._by_name[name] = info
        self._by_id[info.topic_id] = info
        return info

    def grow(self, name: str, partitions: int) -> TopicInfo:
        info = self._by_name[name]._replace(num_partitions=partitions)
        self._by_name[name] = info
        self._by_id[info.topic_id] = info
        return info

    def delete(self, name: str) -> None:
        info = self._by_name.pop(name, None)
        if info is not None:
            self._by_id.pop(info.topic_id, None)
