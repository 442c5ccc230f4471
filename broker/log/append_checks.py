"""Topic-config checks on produce batches beyond framing and CRC: timestamp bounds, keys when compacted."""

from __future__ import annotations

from kafkito.broker.log.batch import BatchHeader
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.errors import InvalidRecord, InvalidTimestamp

NO_TIMESTAMP = -1  # records of message format v0 have none; Kafka does not judge them


def check_timestamps(headers: list[BatchHeader], now_ms: int, config: LogConfig) -> None:
    """message.timestamp.{before,after}.max.ms for CreateTime topics, judged from batch headers."""
    for header in headers:
        if header.max_timestamp - now_ms > config.message_timestamp_after_max_ms:
            raise InvalidTimestamp(
                f"timestamp {header.max_timestamp} is more than message.timestamp.after.max.ms "
                f"{config.message_timestamp_after_max_ms} ahead of the broker time {now_ms}"
            )
        if (
            header.base_timestamp != NO_TIMESTAMP
            and now_ms - header.base_timestamp > config.message_timestamp_before_max_ms
        ):
            raise InvalidTimestamp(
                f"timestamp {header.base_timestamp} is more than message.timestamp.before.max.ms "
                f"{config.message_timestamp_before_max_ms} behind the broker time {now_ms}"
            )


def check_keys(records: bytes | bytearray | memoryview, batches: list[tuple[int, BatchHeader]]) -> None:
    """Compacted topics need a key on every record; this decodes, so it only runs for them."""
    from kafka.record.default_records import DefaultRecordBatch

    view = memoryview(records)
    for pos, header in batches:
        for record in DefaultRecordBatch(view[pos : pos + header.size]):
            if record.key is None:
                raise InvalidRecord("compacted topic cannot accept a record without a key")
