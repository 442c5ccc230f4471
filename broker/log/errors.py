"""Storage errors, each carrying the Kafka error code a handler puts in its response."""

from __future__ import annotations

from typing import ClassVar

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
