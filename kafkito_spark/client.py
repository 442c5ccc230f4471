"""The confluent-kafka calls the data source makes: discovery, offsets, range reads, produce, commit."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
)
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkito_spark.errors import KafkaDataLossError
from kafkito_spark.offsets import OffsetRange, Offsets, TopicPartition
from kafkito_spark.options import Subscription

REQUEST_TIMEOUT_S = 30.0
COMMIT_TIMEOUT_S = 10.0
# Fetched per consume() call while reading a range.
CONSUME_BATCH = 1000
# The group the range reader names in its (never committed) client config: librdkafka wants one.
READER_GROUP = "kafkito-spark-reader"


class KafkaView:
    """What the planner asks the cluster: which partitions exist, and their first and next offsets."""

    def __init__(self, client: Mapping[str, str]) -> None:
        self._client: dict[str, Any] = dict(client)
        self._admin: AdminClient | None = None

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient(self._client)
        return self._admin

    def partitions(self, subscription: Subscription) -> list[TopicPartition]:
        if subscription.kind == "assign":
            return sorted(subscription.assigned)
        metadata = self.admin.list_topics(timeout=REQUEST_TIMEOUT_S)
        found: list[TopicPartition] = []
        for name, topic in metadata.topics.items():
            if topic.error is not None or name.startswith("__") or not subscription.matches(name):
                continue
            found.extend((name, p) for p in topic.partitions)
        return sorted(found)

    def earliest(self, partitions: Iterable[TopicPartition]) -> Offsets:
        return self._list_offsets(partitions, OffsetSpec.earliest())

    def latest(self, partitions: Iterable[TopicPartition]) -> Offsets:
        return self._list_offsets(partitions, OffsetSpec.latest())

    def _list_offsets(self, partitions: Iterable[TopicPartition], spec: OffsetSpec) -> Offsets:
        request = {KafkaTopicPartition(t, p): spec for t, p in partitions}
        if not request:
            return {}
        committed = self._client.get("isolation.level") == "read_committed"
        level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
        futures = self.admin.list_offsets(request, isolation_level=level, request_timeout=REQUEST_TIMEOUT_S)
        return {(tp.topic, tp.partition): int(f.result().offset) for tp, f in futures.items()}


def _offset(msg: Message) -> int:
    offset = msg.offset()
    assert offset is not None  # set on every fetched record and partition-EOF event
    return offset


def _timestamp_type(kind: int) -> int:
    # confluent-kafka: 0 none, 1 create time, 2 log-append time; Kafka (and Spark's column): -1, 0, 1.
    return kind - 1


class RangeReader:
    """Reads the records of one offset range with an assigned consumer (no group membership)."""

    def __init__(
        self,
        client: Mapping[str, str],
        rng: OffsetRange,
        *,
        fail_on_data_loss: bool,
        poll_timeout_ms: int,
    ) -> None:
        self._client = dict(client)
        self.rng = rng
        self._fail_on_data_loss = fail_on_data_loss
        self._poll_timeout_s = poll_timeout_ms / 1000

    def _data_loss(self, message: str) -> None:
        if self._fail_on_data_loss:
            raise KafkaDataLossError(message)

    def messages(self) -> Iterator[list[Message]]:
        """Batches of records with offsets in the range, in offset order; gaps (compaction) are skipped."""
        rng = self.rng
        consumer = Consumer(
            {
                **self._client,
                "group.id": READER_GROUP,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",
            }
        )
        try:
            tp = KafkaTopicPartition(rng.topic, rng.partition)
            low, high = consumer.get_watermark_offsets(tp, timeout=REQUEST_TIMEOUT_S, cached=False)
            start, until = rng.start, rng.until
            if low > start:
                self._data_loss(
                    f"offsets [{start}, {min(low, until)}) of {rng.topic}-{rng.partition} are gone"
                )
                start = low
            if high < until:
                self._data_loss(f"{rng.topic}-{rng.partition} ends at {high}, before {until}")
                until = high
            if start >= until:
                return
            consumer.assign([KafkaTopicPartition(rng.topic, rng.partition, start)])
            yield from self._consume(consumer, start, until)
        finally:
            consumer.close()

    def _consume(self, consumer: Consumer, start: int, until: int) -> Iterator[list[Message]]:
        position = start
        deadline = time.monotonic() + self._poll_timeout_s
        while position < until:
            # Asking for no more than the range holds returns as soon as the range is complete.
            polled = consumer.consume(
                min(CONSUME_BATCH, until - position), timeout=min(1.0, self._poll_timeout_s)
            )
            batch, position, lost = self._take(polled, position, until)
            if lost:
                return
            if batch:
                deadline = time.monotonic() + self._poll_timeout_s
                yield batch
            elif time.monotonic() > deadline:
                raise TimeoutError(
                    f"no record of {self.rng.topic}-{self.rng.partition} at offset {position} within "
                    f"{self._poll_timeout_s:.0f} s (kafkaConsumer.pollTimeoutMs), reading up to {until}"
                )

    def _take(self, polled: list[Message], position: int, until: int) -> tuple[list[Message], int, bool]:
        """One poll's records below `until`, the position after them, and whether data was lost."""
        batch: list[Message] = []
        for msg in polled:
            err = msg.error()
            if err is None:
                offset = _offset(msg)
                if offset >= until:
                    return batch, until, False
                batch.append(msg)
                position = offset + 1
            elif err.code() == KafkaError._PARTITION_EOF:
                # Everything below the high watermark has been delivered: a range end behind
                # a gap (transaction markers, compaction) is reached without another record.
                if _offset(msg) >= until:
                    position = until
            elif err.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                self._data_loss(f"offset {position} of {self.rng.topic}-{self.rng.partition} is out of range")
                return batch, position, True
            elif not err.retriable():
                raise KafkaException(err)
        return batch, position, False


def record_columns(messages: Iterable[Message], include_headers: bool) -> dict[str, list[Any]]:
    """Spark's Kafka columns for a batch of messages, as Python lists."""
    cols: dict[str, list[Any]] = {
        name: [] for name in ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")
    }
    if include_headers:
        cols["headers"] = []
    for msg in messages:
        kind, ts = msg.timestamp()
        cols["key"].append(msg.key())
        cols["value"].append(msg.value())
        cols["topic"].append(msg.topic())
        cols["partition"].append(msg.partition())
        cols["offset"].append(_offset(msg))
        cols["timestamp"].append(ts * 1000)  # microseconds, as Arrow's timestamp column holds them
        cols["timestampType"].append(_timestamp_type(kind))
        if include_headers:
            headers = msg.headers()  # fetched records carry a list of (key, value) pairs
            pairs = list(headers.items() if isinstance(headers, dict) else headers or [])
            cols["headers"].append([{"key": k, "value": v} for k, v in pairs] if pairs else None)
    return cols


def commit_group_offsets(
    client: Mapping[str, str],
    group_id: str,
    offsets: Mapping[TopicPartition, int],
    timeout_s: float = COMMIT_TIMEOUT_S,
) -> None:
    """Commit `offsets` (the next offset to read, per partition) to a group that has no members."""
    if not offsets:
        return
    admin = AdminClient(dict(client))
    request = ConsumerGroupTopicPartitions(
        group_id, [KafkaTopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
    )
    futures = admin.alter_consumer_group_offsets([request], request_timeout=timeout_s)
    result = futures[group_id].result()
    for tp in result.topic_partitions or []:
        if tp.error is not None:
            raise KafkaException(tp.error)


class RecordProducer:
    """Produces records and, on `flush`, raises the first delivery error instead of dropping it.

    The producer is idempotent unless `kafka.enable.idempotence` says otherwise: the client's own
    retries then never duplicate or reorder a record; only a retried Spark task can.
    """

    def __init__(self, client: Mapping[str, str]) -> None:
        self._producer = Producer({"enable.idempotence": True, **client})
        self._error: KafkaError | None = None
        self.sent = 0

    def _on_delivery(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None and self._error is None:
            self._error = err

    def produce(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        partition: int | None = None,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {"value": value, "key": key, "on_delivery": self._on_delivery}
        if partition is not None:
            kwargs["partition"] = partition
        if headers:
            kwargs["headers"] = headers
        while True:
            try:
                self._producer.produce(topic, **kwargs)
                break
            except BufferError:
                self._producer.poll(0.1)  # the local queue is full: let deliveries drain it
        self._producer.poll(0)
        self.sent += 1
        if self._error is not None:
            raise KafkaException(self._error)

    def flush(self, timeout_s: float = 120.0) -> None:
        remaining = self._producer.flush(timeout_s)
        if self._error is not None:
            raise KafkaException(self._error)
        if remaining:
            raise TimeoutError(f"{remaining} records were not delivered within {timeout_s:.0f} s")
