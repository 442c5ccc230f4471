"""Kafka's per-record checks of a produce request's batches (KIP-467): a key on every record of a
compacted topic, CreateTime timestamps within message.timestamp.{before,after}.max.ms, no
producer-set LogAppendTime. A batch with refused records is refused whole, naming each record.

Batches are judged from their headers when that is enough; only a batch that may hold a refused
record is decoded (every batch of a compacted topic, one whose max timestamp is too new, every
batch when message.timestamp.before.max.ms is set, a LogAppendTime batch from a producer).
"""

from __future__ import annotations

from typing import Any

from kafkito.broker.log.batch import BatchHeader
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.errors import (
    InvalidRecord,
    InvalidRecords,
    InvalidTimestamps,
    RecordError,
    RecordValidationError,
    UnreadableRecords,
)
from kafkito.protocol.errors import ErrorCode

NO_TIMESTAMP = -1  # records of message format v0 have none; Kafka does not judge them
SHOWN_ERRORS = 3  # Kafka's summary message quotes at most the first three record errors

Buffer = bytes | bytearray | memoryview


def check_records(
    records: Buffer, batches: list[tuple[int, BatchHeader]], now_ms: int, config: LogConfig, partition: str
) -> None:
    """Raise InvalidRecords / InvalidTimestamps for the first batch with refused records.

    `partition` names the topic partition as Kafka does in its messages ("topic-0").
    """
    create_time = not config.log_append_time
    lower = now_ms - config.message_timestamp_before_max_ms
    upper = now_ms + config.message_timestamp_after_max_ms
    # With the default before.max.ms (forever) no timestamp a client can send is too old.
    check_old = create_time and lower > 0
    view = memoryview(records)
    for pos, header in batches:
        if not (
            config.compact
            or header.is_log_append_time
            or (create_time and (check_old or header.max_timestamp > upper))
        ):
            continue
        judge = _RecordJudge(config.compact, create_time, lower, upper, partition)
        errors = judge.batch(view[pos : pos + header.size])
        if errors:
            raise _rejection(errors)


class _RecordJudge:
    """LogValidator's validateRecord for one topic partition: the key first, then the timestamp."""

    __slots__ = ("compact", "create_time", "lower", "partition", "upper")

    def __init__(self, compact: bool, create_time: bool, lower: int, upper: int, partition: str) -> None:
        self.compact = compact
        self.create_time = create_time
        self.lower = lower
        self.upper = upper
        self.partition = partition

    def batch(self, data: memoryview) -> list[tuple[ErrorCode, RecordError]]:
        from kafka.errors import CorruptRecordError, UnsupportedCodecError
        from kafka.record.default_records import DefaultRecordBatch

        decoded = DefaultRecordBatch(data)
        log_append_time = decoded.timestamp_type == DefaultRecordBatch.LOG_APPEND_TIME
        errors: list[tuple[ErrorCode, RecordError]] = []
        try:
            records = iter(decoded)
        except UnsupportedCodecError as exc:
            raise UnreadableRecords(f"cannot decompress a batch: {exc}") from None
        except Exception as exc:  # each codec library raises its own errors for bad input
            raise UnreadableRecords(f"cannot decompress a batch: {exc.__class__.__name__}") from None
        try:
            for index, record in enumerate(records):
                error = self.record(index, record, log_append_time)
                if error is not None:
                    errors.append(error)
        except CorruptRecordError as exc:
            raise InvalidRecord(f"cannot read the records of a batch: {exc}") from None
        return errors

    def record(self, index: int, record: Any, log_append_time: bool) -> tuple[ErrorCode, RecordError] | None:
        if self.compact and record.key is None:
            message = f"Compacted topic cannot accept message without key in topic partition {self.partition}"
            return ErrorCode.INVALID_RECORD, RecordError(index, message)
        timestamp = record.timestamp
        if self.create_time and timestamp != NO_TIMESTAMP:
            if timestamp < self.lower or timestamp > self.upper:
                message = (
                    f"Timestamp {timestamp} of message with offset {record.offset} is out of range. "
                    f"The timestamp should be within [{self.lower}, {self.upper}]"
                )
                return ErrorCode.INVALID_TIMESTAMP, RecordError(index, message)
        elif log_append_time:
            message = (
                f"Invalid timestamp type in message {_describe(record)}. "
                "Producer should not set timestamp type to LogAppendTime."
            )
            return ErrorCode.INVALID_TIMESTAMP, RecordError(index, message)
        return None


def _describe(record: Any) -> str:
    """A record as Kafka's messages show it: offset, timestamp and the sizes of key and value."""
    key = 0 if record.key is None else len(record.key)
    value = 0 if record.value is None else len(record.value)
    return (
        f"DefaultRecord(offset={record.offset}, timestamp={record.timestamp}, "
        f"key={key} bytes, value={value} bytes)"
    )


def _rejection(errors: list[tuple[ErrorCode, RecordError]]) -> RecordValidationError:
    """The batch's error: INVALID_TIMESTAMP if any record's timestamp was refused, else INVALID_RECORD,
    with Kafka's summary as the message and every refused record listed."""
    record_errors = [e for _, e in errors]
    if any(code is ErrorCode.INVALID_TIMESTAMP for code, _ in errors):
        return InvalidTimestamps(
            "One or more records have been rejected due to invalid timestamp", record_errors
        )
    shown = ", ".join(
        f"RecordError(batchIndex={e.batch_index}, message='{e.message}')"
        for e in record_errors[:SHOWN_ERRORS]
    )
    return InvalidRecords(
        f"One or more records have been rejected due to {len(record_errors)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]",
        record_errors,
    )
