"""Spark's Kafka source and sink options, parsed and checked once on the driver."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.offsets import (
    EARLIEST,
    EARLIEST_OFFSET,
    LATEST,
    LATEST_OFFSET,
    OffsetsSpec,
    parse_offsets_spec,
)

SubscriptionKind = Literal["subscribe", "subscribePattern", "assign"]

# Client properties the source manages itself, as Spark's Kafka source does.
_MANAGED_PROPERTIES = frozenset(
    {
        "group.id",
        "auto.offset.reset",
        "enable.auto.commit",
        "key.deserializer",
        "value.deserializer",
        "key.serializer",
        "value.serializer",
        "interceptor.classes",
    }
)

DEFAULT_POLL_TIMEOUT_MS = 120_000

# Options of Spark's Kafka source that this one does not implement: refused rather than ignored.
_UNSUPPORTED_READ_OPTIONS = (
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "minPartitions",
    "maxRecordsPerPartition",
)


@dataclass(frozen=True, slots=True)
class Subscription:
    """Which topic-partitions a query reads: a topic list, a regex, or explicit partitions."""

    kind: SubscriptionKind
    topics: tuple[str, ...] = ()
    pattern: str = ""
    assigned: tuple[tuple[str, int], ...] = ()

    def matches(self, topic: str) -> bool:
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern, topic) is not None
        return any(t == topic for t, _ in self.assigned)


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Everything a reader needs: plain data only, because Spark pickles readers to its workers."""

    client: dict[str, str]
    subscription: Subscription
    starting: OffsetsSpec
    ending: OffsetsSpec
    max_offsets_per_trigger: int | None
    fail_on_data_loss: bool
    include_headers: bool
    group_id: str | None
    poll_timeout_ms: int


DeliveryGuarantee = Literal["at-least-once", "exactly-once"]


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """Everything a writer needs: producer properties, the default topic, the delivery guarantee
    and, for exactly-once, the prefix of its transactional ids."""

    client: dict[str, str]
    topic: str | None
    delivery_guarantee: DeliveryGuarantee = "at-least-once"
    transactional_id_prefix: str | None = None


def _lower_keys(options: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in options.items()}


def client_properties(options: Mapping[str, str]) -> dict[str, str]:
    """The `kafka.`-prefixed options, without the prefix, for the confluent-kafka client."""
    opts = _lower_keys(options)
    if "kafka.bootstrap.servers" not in opts:
        raise KafkaOptionError("option 'kafka.bootstrap.servers' must be specified")
    props: dict[str, str] = {}
    for key, value in opts.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if name in _MANAGED_PROPERTIES:
            if name == "group.id":
                continue  # read separately: the group that processed offsets are committed to
            raise KafkaOptionError(f"kafka option '{name}' is not supported: the source manages it")
        props[name] = value
    return props


def _parse_bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    if raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise KafkaOptionError(f"option '{name}' must be true or false, got {raw!r}")


def parse_subscription(opts: Mapping[str, str]) -> Subscription:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if opts.get(name)]
    if len(given) != 1:
        raise KafkaOptionError("exactly one of 'subscribe', 'subscribePattern' or 'assign' must be specified")
    value = opts[given[0]]
    if given[0] == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise KafkaOptionError("option 'subscribe' names no topic")
        return Subscription("subscribe", topics=topics)
    if given[0] == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise KafkaOptionError(f"option 'subscribePattern' is not a valid regex: {exc}") from None
        return Subscription("subscribePattern", pattern=value)
    try:
        parsed = json.loads(value)
        assigned = tuple(sorted((str(topic), int(p)) for topic, parts in parsed.items() for p in parts))
    except (ValueError, TypeError, AttributeError):
        raise KafkaOptionError(
            f'option \'assign\' must be JSON like {{"topicA":[0,1],"topicB":[2,4]}}, got {value!r}'
        ) from None
    if not assigned:
        raise KafkaOptionError("option 'assign' names no partition")
    return Subscription("assign", assigned=assigned)


def parse_read_options(options: Mapping[str, str], streaming: bool) -> ReadOptions:
    """Check the options of `spark.read`/`spark.readStream` as Spark's Kafka source does."""
    opts = _lower_keys(options)
    for name in _UNSUPPORTED_READ_OPTIONS:
        if name.lower() in opts:
            raise KafkaOptionError(
                f"option '{name}' of Spark's Kafka source is not supported by kafkito_spark"
            )
    client = client_properties(opts)
    subscription = parse_subscription(opts)
    starting = parse_offsets_spec(opts.get("startingoffsets"), default=LATEST if streaming else EARLIEST)
    ending = parse_offsets_spec(opts.get("endingoffsets"), default=LATEST)
    if streaming and "endingoffsets" in opts:
        raise KafkaOptionError("option 'endingOffsets' is for batch queries only")
    if not streaming:
        if starting == LATEST or (isinstance(starting, dict) and LATEST_OFFSET in starting.values()):
            raise KafkaOptionError("option 'startingOffsets' cannot be latest (-1) for batch queries")
        if ending == EARLIEST or (isinstance(ending, dict) and EARLIEST_OFFSET in ending.values()):
            raise KafkaOptionError("option 'endingOffsets' cannot be earliest (-2) for batch queries")
    max_per_trigger: int | None = None
    raw_max = opts.get("maxoffsetspertrigger")
    if raw_max is not None:
        try:
            max_per_trigger = int(raw_max)
        except ValueError:
            raise KafkaOptionError(
                f"option 'maxOffsetsPerTrigger' must be an integer, got {raw_max!r}"
            ) from None
        if max_per_trigger <= 0:
            raise KafkaOptionError("option 'maxOffsetsPerTrigger' must be positive")
    poll_timeout = int(opts.get("kafkaconsumer.polltimeoutms", DEFAULT_POLL_TIMEOUT_MS))
    return ReadOptions(
        client=client,
        subscription=subscription,
        starting=starting,
        ending=ending,
        max_offsets_per_trigger=max_per_trigger,
        fail_on_data_loss=_parse_bool(opts, "failOnDataLoss", True),
        include_headers=_parse_bool(opts, "includeHeaders", False),
        group_id=opts.get("kafka.group.id") or None,
        poll_timeout_ms=poll_timeout,
    )


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    """The sink's options; `deliveryGuarantee` `exactly-once` needs `transactionalIdPrefix` and
    `topic` (its partition 0 holds the batch markers, docs/spark.md)."""
    opts = _lower_keys(options)
    topic = opts.get("topic") or None
    guarantee = opts.get("deliveryguarantee", "at-least-once").strip().lower()
    if guarantee not in ("at-least-once", "exactly-once"):
        raise KafkaOptionError(
            f"option 'deliveryGuarantee' must be at-least-once or exactly-once, got {guarantee!r}"
        )
    prefix = opts.get("transactionalidprefix") or None
    if guarantee == "exactly-once":
        if prefix is None:
            raise KafkaOptionError("deliveryGuarantee exactly-once needs the option 'transactionalIdPrefix'")
        if topic is None:
            raise KafkaOptionError("deliveryGuarantee exactly-once needs the option 'topic'")
    return WriteOptions(
        client=client_properties(opts),
        topic=topic,
        delivery_guarantee="exactly-once" if guarantee == "exactly-once" else "at-least-once",
        transactional_id_prefix=prefix,
    )
