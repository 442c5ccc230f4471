"""Storage errors, each carrying the Kafka error code a handler puts in its response."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, NamedTuple

from kafkito.protocol.errors import ErrorCode, KafkaError


class LogError(KafkaError):
    """Base of every error raised by `broker.log`; `code` is the Kafka error code."""

    CODE: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str = "") -> None:
        super().__init__(self.CODE, message)


class OffsetOutOfRange(LogError):
    CODE = ErrorCode.OFFSET_OUT_OF_RANGE


class CorruptMessage(LogError):
    CODE = ErrorCode.CORRUPT_MESSAGE


class UnknownTopicOrPartition(LogError):
    CODE = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class MessageTooLarge(LogError):
    CODE = ErrorCode.MESSAGE_TOO_LARGE


class RecordListTooLarge(LogError):
    CODE = ErrorCode.RECORD_LIST_TOO_LARGE


class InvalidRecord(LogError):
    CODE = ErrorCode.INVALID_RECORD


class InvalidTimestamp(LogError):
    CODE = ErrorCode.INVALID_TIMESTAMP


class RecordError(NamedTuple):
    """One record a batch was refused for (KIP-467): its index in the batch and why."""

    batch_index: int
    message: str


class RecordValidationError(LogError):
    """A batch refused for some of its records (Kafka's RecordValidationException): Produce v8+
    answers the records in `record_errors` and the message as the partition's error_message, so
    that a producer can tell the refused records from the rest of the batch."""

    def __init__(self, message: str, record_errors: Sequence[RecordError]) -> None:
        super().__init__(message)
        self.record_errors = tuple(record_errors)


class InvalidRecords(RecordValidationError, InvalidRecord):
    """INVALID_RECORD naming the records (a missing key on a compacted topic, ...)."""


class InvalidTimestamps(RecordValidationError, InvalidTimestamp):
    """INVALID_TIMESTAMP naming the records (at least one record's timestamp was refused)."""


class UnreadableRecords(LogError):
    """Records the broker cannot read (an unknown codec id, a payload that does not decompress):
    Kafka's UNKNOWN_SERVER_ERROR for the partition, the connection kept."""


class OutOfOrderSequence(LogError):
    CODE = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerEpoch(LogError):
    CODE = ErrorCode.INVALID_PRODUCER_EPOCH


class TopicAlreadyExists(LogError):
    CODE = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitions(LogError):
    CODE = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactor(LogError):
    CODE = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidConfig(LogError):
    CODE = ErrorCode.INVALID_CONFIG


class InvalidTopic(LogError):
    CODE = ErrorCode.INVALID_TOPIC_EXCEPTION


class KafkaStorageError(LogError):
    CODE = ErrorCode.KAFKA_STORAGE_ERROR


class InvalidTxnState(LogError):
    CODE = ErrorCode.INVALID_TXN_STATE


class TransactionCoordinatorFenced(LogError):
    CODE = ErrorCode.TRANSACTION_COORDINATOR_FENCED
