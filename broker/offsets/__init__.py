"""The `__consumer_offsets` log: record formats, persistence, reload, expiry."""

from kafkito.broker.offsets.log_sink import OFFSETS_TOPIC, LogRecordSink
from kafkito.broker.offsets.manager import OffsetsConfig, OffsetsManager, ensure_offsets_topic
from kafkito.broker.offsets.partitioner import java_string_hash, partition_for

__all__ = [
    "OFFSETS_TOPIC",
    "LogRecordSink",
    "OffsetsConfig",
    "OffsetsManager",
    "ensure_offsets_topic",
    "java_string_hash",
    "partition_for",
]
