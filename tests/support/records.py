"""Records in one client-neutral shape: what a test produces, and what a consumer hands back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Header = tuple[str, bytes]


@dataclass(frozen=True, slots=True)
class Rec:
    """One record to produce. `timestamp` None: the client stamps it (CreateTime = now)."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class Got:
    """One record as a consumer delivered it."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None


def plain_headers(raw: Iterable[tuple[str, Any]] | None) -> tuple[Header, ...]:
    """Headers as (name, bytes) pairs: clients hand back lists, and None for an empty value."""
    return tuple((k, bytes(v) if v is not None else b"") for k, v in (raw or ()))


def got_from_record(m: Any) -> Got:
    """A kafka-python or aiokafka ConsumerRecord (both have the same attributes)."""
    return Got(m.partition, m.offset, m.key, m.value, plain_headers(m.headers), m.timestamp)


def got_from_message(m: Any) -> Got:
    """A confluent-kafka Message."""
    return Got(m.partition(), m.offset(), m.key(), m.value(), plain_headers(m.headers()), m.timestamp()[1])
