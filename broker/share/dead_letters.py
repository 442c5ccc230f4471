"""A share group's dead-letter queue (KIP-1191), as Kafka 4.4 writes it.

When a share group names a topic in `errors.deadletterqueue.topic.name` (a GROUP config) and the
cluster's `share.version` is 2 or more, every record the group archives because a member rejected it
(REJECT) or because it was delivered `delivery.count.limit` times is written to that topic before its
archival is persisted: one record per archived offset, in the DLQ partition (source partition mod the
DLQ's partition count), stamped with the broker's time (CreateTime), with the headers
`__dlq.errors.topic`, `__dlq.errors.partition`, `__dlq.errors.offset`, `__dlq.errors.group`,
`__dlq.errors.delivery.count` and `__dlq.errors.message` (why), all as UTF-8 text. Its key and value
are null, or the original record's with `errors.deadletterqueue.copy.record.enable` (not its headers,
as Kafka's; a record the log no longer holds gets the headers only).

Kafka writes only to a topic whose name starts with the broker's `errors.deadletterqueue.topic.name.
prefix` ("dlq." by default), does not start with `__`, and whose `errors.deadletterqueue.group.enable`
topic config is true; a missing topic is created (default partitions, that config set, CreateTime)
when `errors.deadletterqueue.auto.create.topics.enable` is true. Otherwise, or when the write fails,
the records are archived all the same and the reason logged, as Kafka logs it.

Kafka produces to the DLQ partition's leader from a background thread and archives once that write is
answered; a single node appends to its own log before the acknowledgement is answered.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.errors import LogError
from kafkito.broker.offsets.batches import batch_records, iter_batches

if TYPE_CHECKING:
    from kafkito.broker.log.metadata_log import TopicInfo
    from kafkito.broker.services import Topics

log = structlog.get_logger("kafkito.share.dlq")

GROUP_ENABLE = "errors.deadletterqueue.group.enable"  # the DLQ topic's own consent
PREFIX = "errors.deadletterqueue.topic.name.prefix"
AUTO_CREATE = "errors.deadletterqueue.auto.create.topics.enable"
DEFAULTS = {PREFIX: "dlq.", AUTO_CREATE: "false"}  # Kafka 4.4's broker defaults
_READ_BYTES = 1 << 20


@dataclass(slots=True)
class DeadLetterSettings:
    """Where a group's dead letters go: its GROUP configs, the broker's settings, the feature level."""

    topic_of: Callable[[str], str]  # group id -> its DLQ topic name, "" for none
    copy_record: Callable[[str], bool]  # group id -> errors.deadletterqueue.copy.record.enable
    broker_setting: Callable[[str], str | None]  # a broker config's effective value (None: default)
    enabled: Callable[[], bool]  # share.version >= 2


class DeadLetters:
    """Writes the records share groups archive to their dead-letter queue topics."""

    __slots__ = ("_now_ms", "_settings", "_topics")

    def __init__(self, topics: Topics, settings: DeadLetterSettings, now_ms: Callable[[], int]) -> None:
        self._topics = topics
        self._settings = settings
        self._now_ms = now_ms

    def write(
        self, group_id: str, topic_id: uuid.UUID, partition: int, records: list[tuple[int, int]], why: str
    ) -> None:
        """Write `records` ((offset, delivery count) of the source partition) to the group's DLQ, if
        it has one Kafka would write to; a refusal or a failure is logged, never raised."""
        name = self._settings.topic_of(group_id).strip()
        if not name or not self._settings.enabled():
            return
        bound = log.bind(group=group_id, dlq_topic=name, partition=partition, offsets=[o for o, _ in records])
        source = self._topics.get_by_id(topic_id)
        if source is None:
            return
        try:
            target = self._target(name)
            if isinstance(target, str):
                bound.warning("share.dlq_refused", reason=target)
                return
            copied = dict(self._originals(source.name, partition, records)) if self._copy(group_id) else {}
            batch = _batch(source.name, partition, group_id, records, why, copied, self._now_ms())
            dlq_partition = partition % target.partitions
            self._topics.get_log(name, dlq_partition).append(batch)
        except (LogError, OSError) as exc:
            bound.error("share.dlq_write_failed", error=str(exc))
            return
        bound.info("share.dlq_written", dlq_partition=dlq_partition, why=why)

    def _copy(self, group_id: str) -> bool:
        return self._settings.copy_record(group_id)

    def _target(self, name: str) -> TopicInfo | str:
        """The DLQ topic (created when allowed), or why Kafka would not write to it."""
        prefix = self._setting(PREFIX)
        if name.startswith("__"):
            return "a dead-letter queue topic's name must not start with '__'"
        if not name.startswith(prefix):
            return f"the topic's name does not start with {PREFIX} {prefix!r}"
        info = self._topics.get(name)
        if info is None:
            if self._setting(AUTO_CREATE).strip().lower() != "true":
                return f"the topic does not exist and {AUTO_CREATE} is false"
            configs = {GROUP_ENABLE: "true", "message.timestamp.type": "CreateTime"}
            info = self._topics.create(name, -1, -1, configs, validate_only=False)
            log.info("share.dlq_topic_created", topic=name, partitions=info.partitions)
            return info
        if info.configs.get(GROUP_ENABLE, "false").strip().lower() != "true":
            return f"the topic's {GROUP_ENABLE} is not true"
        return info

    def _setting(self, name: str) -> str:
        value = self._settings.broker_setting(name)
        return DEFAULTS[name] if value is None else value

    def _originals(
        self, topic: str, partition: int, records: list[tuple[int, int]]
    ) -> Iterator[tuple[int, tuple[bytes | None, bytes | None]]]:
        """(offset, (key, value)) of each wanted offset the source log still holds."""
        wanted = {offset for offset, _ in records}
        plog = self._topics.get_log(topic, partition)
        position, end = min(wanted), max(wanted) + 1
        while position < end:
            advanced = False
            for header, batch in iter_batches(plog.read(position, _READ_BYTES)):
                if header.next_offset <= position:
                    continue
                position = header.next_offset
                advanced = True
                for record in batch_records(batch, header):
                    if record.offset in wanted:
                        yield record.offset, (record.key, record.value)
            if not advanced:
                break


def _batch(
    topic: str,
    partition: int,
    group_id: str,
    records: list[tuple[int, int]],
    why: str,
    copied: dict[int, tuple[bytes | None, bytes | None]],
    now_ms: int,
) -> bytes:
    """One uncompressed CreateTime batch of the dead letters, without a producer id (as Kafka's)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder  # only once a group uses a DLQ

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    common = [("__dlq.errors.topic", topic.encode()), ("__dlq.errors.partition", str(partition).encode())]
    for i, (offset, delivery_count) in enumerate(records):
        key, value = copied.get(offset, (None, None))
        headers = [
            *common,
            ("__dlq.errors.offset", str(offset).encode()),
            ("__dlq.errors.group", group_id.encode()),
            ("__dlq.errors.delivery.count", str(delivery_count).encode()),
            ("__dlq.errors.message", why.encode()),
        ]
        builder.append(i, now_ms, key, value, headers)
    return bytes(builder.build())
