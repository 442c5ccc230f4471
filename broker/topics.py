"""The topic registry as the request handlers see it: names, ids, partition counts, internal flag."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from protocol.errors import ErrorCode, KafkaError

_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_NAME_LENGTH = 249


def validate_topic_name(name: str | None) -> None:
    """Kafka's topic name rules; raises KafkaError(INVALID_TOPIC_EXCEPTION)."""
    if not name or name in (".", "..") or len(name) > MAX_NAME_LENGTH or not _LEGAL.match(name):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"illegal topic name {name!r}")


@dataclass(slots=True)
class TopicInfo:
    name: str
    partitions: int
    topic_id: uuid.UUID = field(default_factory=uuid.uuid4)
    internal: bool = False
    configs: dict[str, str] = field(default_factory=dict)


class TopicRegistry(Protocol):
    def get(self, name: str) -> TopicInfo | None: ...
    def all(self) -> list[TopicInfo]: ...
    def create(self, name: str, partitions: int, configs: dict[str, str] | None = None) -> TopicInfo: ...


class MemoryTopics:
    """Topics kept in memory only (tests and the pre-storage broker)."""

    def __init__(self) -> None:
        self._topics: dict[str, TopicInfo] = {}

    def get(self, name: str) -> TopicInfo | None:
        return self._topics.get(name)

    def all(self) -> list[TopicInfo]:
        return list(self._topics.values())

    def create(self, name: str, partitions: int, configs: dict[str, str] | None = None) -> TopicInfo:
        validate_topic_name(name)
        if name in self._topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        info = TopicInfo(name, partitions, configs=dict(configs or {}), internal=name.startswith("__"))
        self._topics[name] = info
        return info
