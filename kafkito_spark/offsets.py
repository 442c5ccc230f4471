"""Offsets per topic-partition: Spark's JSON form, option specs, rate limits and read ranges."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from kafkito_spark.errors import KafkaOptionError

TopicPartition: TypeAlias = tuple[str, int]
Offsets: TypeAlias = dict[TopicPartition, int]
OffsetsSpec: TypeAlias = Literal["earliest", "latest"] | Offsets

EARLIEST: Literal["earliest"] = "earliest"
LATEST: Literal["latest"] = "latest"
# Spark's sentinels inside startingOffsets/endingOffsets JSON.
EARLIEST_OFFSET = -2
LATEST_OFFSET = -1


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Spark's Kafka offset JSON: `{"topic": {"0": 23, "1": 7}}`, topics and partitions sorted."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def from_json(data: Mapping[str, Mapping[str, int]]) -> Offsets:
    try:
        return {(str(t), int(p)): int(o) for t, parts in data.items() for p, o in parts.items()}
    except (AttributeError, TypeError, ValueError):
        raise KafkaOptionError(
            f'offsets must be JSON like {{"topicA":{{"0":23,"1":-1}}}}, got {json.dumps(data)!r}'
        ) from None


def parse_offsets_spec(raw: str | None, default: Literal["earliest", "latest"]) -> OffsetsSpec:
    """`earliest`, `latest`, or per-partition JSON where -2 means earliest and -1 latest."""
    if raw is None or not raw.strip():
        return default
    text = raw.strip()
    if text.lower() in (EARLIEST, LATEST):
        return EARLIEST if text.lower() == EARLIEST else LATEST
    try:
        data = json.loads(text)
    except ValueError:
        raise KafkaOptionError(f"offsets must be 'earliest', 'latest' or JSON, got {raw!r}") from None
    if not isinstance(data, dict):
        raise KafkaOptionError(f"offsets JSON must be an object, got {raw!r}")
    offsets = from_json(data)
    for tp, offset in offsets.items():
        if offset < EARLIEST_OFFSET:
            raise KafkaOptionError(f"offset {offset} for {tp[0]}-{tp[1]} is not valid")
    return offsets


def resolve(
    spec: OffsetsSpec,
    partitions: Iterable[TopicPartition],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    option: str,
) -> Offsets:
    """Turn a spec into concrete offsets for exactly `partitions` (JSON must name all of them)."""
    wanted = sorted(partitions)
    if spec == EARLIEST:
        return {tp: earliest[tp] for tp in wanted}
    if spec == LATEST:
        return {tp: latest[tp] for tp in wanted}
    assert isinstance(spec, dict)
    if set(spec) != set(wanted):
        raise KafkaOptionError(
            f"option '{option}' for specific partitions must name every assigned partition: "
            f"specified {sorted(spec)}, assigned {wanted}"
        )
    resolved: Offsets = {}
    for tp in wanted:
        offset = spec[tp]
        resolved[tp] = (
            earliest[tp] if offset == EARLIEST_OFFSET else latest[tp] if offset == LATEST_OFFSET else offset
        )
    return resolved


def rate_limit(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], limit: int
) -> Offsets:
    """Advance at most about `limit` offsets in total, shared in proportion to each partition's backlog,
    as Spark's Kafka connector shares `maxOffsetsPerTrigger`: each partition's share is floored, but a
    share below one offset is rounded up so that a small partition is never starved (so the total
    may fall short of `limit` by up to one offset a partition, or pass it by the partitions rounded
    up). No partition passes its latest. `start` must name every partition of `latest`.
    """
    backlog = {tp: max(0, end - start[tp]) for tp, end in latest.items()}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    ends: Offsets = {}
    for tp, end in latest.items():
        whole, rest = divmod(backlog[tp] * limit, total)
        share = 1 if whole == 0 and rest else whole
        ends[tp] = min(end, start[tp] + share)
    return ends


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """Offsets [start, until) of one topic-partition: the unit of work of one Spark task."""

    topic: str
    partition: int
    start: int
    until: int

    @property
    def size(self) -> int:
        return self.until - self.start


def plan_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> list[OffsetRange]:
    """One range per partition with something to read; `start` must name every partition of `end`."""
    ranges = []
    for tp, until in sorted(end.items()):
        begin = start[tp]
        if until > begin:
            ranges.append(OffsetRange(tp[0], tp[1], begin, until))
    return ranges
