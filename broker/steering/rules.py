"""Fault rules: what a test asked the broker to get wrong (an error or a delay), and which requests match.

A rule names one API and, optionally, a client id, a group, a topic and a partition. Each request that
matches consumes one of its `count` (None: until removed); a partition-level rule matches a request
that carries a matching partition, and only those partitions are answered with the error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import count as counter
from typing import Any

from kafkito.protocol.codec import MESSAGES
from kafkito.protocol.errors import ErrorCode

_API_BY_NAME = {stem.lower(): key for key, (_, stem) in MESSAGES.items()}


def api_key_of(api: str | int) -> int:
    """A Kafka API key from its name ("Produce", "OffsetCommit", case-insensitive) or its number."""
    if isinstance(api, bool):
        raise ValueError(f"not an API: {api!r}")
    if isinstance(api, int):
        if api not in MESSAGES:
            raise ValueError(f"unknown API key {api}")
        return api
    key = _API_BY_NAME.get(api.strip().replace("_", "").lower())
    if key is None:
        if api.strip().isdigit():
            return api_key_of(int(api))
        raise ValueError(f"unknown API {api!r} (Kafka's names, e.g. Produce, Fetch, JoinGroup)")
    return key


def api_name(api_key: int) -> str:
    return MESSAGES[api_key][1]


def error_of(error: str | int | ErrorCode | None) -> ErrorCode:
    """An ErrorCode from Kafka's name ("NOT_LEADER_OR_FOLLOWER", case-insensitive), its number, or None."""
    if error is None:
        return ErrorCode.NONE
    if isinstance(error, ErrorCode):
        return error
    if isinstance(error, int) and not isinstance(error, bool):
        try:
            return ErrorCode(error)
        except ValueError:
            raise ValueError(f"unknown error code {error}") from None
    if isinstance(error, str):
        text = error.strip()
        if text.lstrip("-").isdigit():
            return error_of(int(text))
        try:
            return ErrorCode[text.upper()]
        except KeyError:
            raise ValueError(f"unknown error {error!r} (Kafka's names: NOT_LEADER_OR_FOLLOWER...)") from None
    raise ValueError(f"not an error: {error!r}")


_ids = counter(1)


@dataclass(slots=True, eq=False)
class FaultRule:
    """One injected fault. `fired` counts the requests it answered; `remaining` is None when unbounded."""

    api_key: int
    error: ErrorCode
    count: int | None = 1
    topic: str | None = None
    partition: int | None = None
    group: str | None = None
    client_id: str | None = None
    delay_ms: int = 0
    id: int = field(default_factory=lambda: next(_ids))
    fired: int = 0
    _on_remove: Callable[[FaultRule], None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.count is not None and self.count < 1:
            raise ValueError(f"count must be at least 1 (or None: until removed), not {self.count}")
        if self.delay_ms < 0:
            raise ValueError(f"delay_ms cannot be negative ({self.delay_ms})")
        if self.partition is not None and self.topic is None:
            raise ValueError("a partition needs its topic")
        if self.error is ErrorCode.NONE and self.delay_ms == 0:
            raise ValueError("a rule needs an error, a delay, or both")

    @property
    def api(self) -> str:
        return api_name(self.api_key)

    @property
    def remaining(self) -> int | None:
        return None if self.count is None else max(self.count - self.fired, 0)

    @property
    def active(self) -> bool:
        return self._on_remove is not None and (self.count is None or self.fired < self.count)

    @property
    def partition_level(self) -> bool:
        return self.topic is not None

    def remove(self) -> None:
        """Stop applying the rule (a no-op once it is removed or used up). Call on the broker's loop."""
        on_remove, self._on_remove = self._on_remove, None
        if on_remove is not None:
            on_remove(self)

    def as_dict(self) -> dict[str, Any]:
        """The rule as JSON-ready values."""
        return {
            "id": self.id,
            "api": self.api,
            "api_key": self.api_key,
            "error": self.error.name,
            "error_code": int(self.error),
            "count": self.count,
            "remaining": self.remaining,
            "fired": self.fired,
            "active": self.active,
            "topic": self.topic,
            "partition": self.partition,
            "group": self.group,
            "client_id": self.client_id,
            "delay_ms": self.delay_ms,
        }


class FaultRules:
    """The rules in force, in the order they were added; `changed` is told when the set empties or fills."""

    __slots__ = ("_by_api", "_changed", "_rules")

    def __init__(self, changed: Callable[[], None]) -> None:
        self._rules: list[FaultRule] = []
        self._by_api: dict[int, list[FaultRule]] = {}
        self._changed = changed

    def __len__(self) -> int:
        return len(self._rules)

    def __iter__(self) -> Iterator[FaultRule]:
        return iter(list(self._rules))

    def add(self, rule: FaultRule) -> FaultRule:
        rule._on_remove = self._discard
        self._rules.append(rule)
        self._by_api.setdefault(rule.api_key, []).append(rule)
        self._changed()
        return rule

    def for_api(self, api_key: int) -> list[FaultRule] | None:
        return self._by_api.get(api_key)

    def get(self, rule_id: int) -> FaultRule | None:
        return next((r for r in self._rules if r.id == rule_id), None)

    def consume(self, rule: FaultRule) -> None:
        """A request matched `rule`: count it, and retire the rule once its count is used up."""
        rule.fired += 1
        if rule.count is not None and rule.fired >= rule.count:
            rule.remove()

    def clear(self) -> None:
        for rule in list(self._rules):
            rule.remove()

    def _discard(self, rule: FaultRule) -> None:
        if rule in self._rules:
            self._rules.remove(rule)
            same_api = self._by_api.get(rule.api_key, [])
            if rule in same_api:
                same_api.remove(rule)
            if not same_api:
                self._by_api.pop(rule.api_key, None)
            self._changed()
