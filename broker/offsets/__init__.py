"""The `__consumer_offsets` log: record formats, persistence, reload, expiry."""

from kafkito.broker.offsets.manager import OffsetsConfig, OffsetsManager, ensure_offsets_topic
from kafkito.broker.offsets.partitioner import java_string_hash, partition_for
from kafkito.broker.offsets.store import OFFSETS_TOPIC, LogGroupStore, TimeBase

__all__ = [
    "OFFSETS_TOPIC",
    "LogGroupStore",
    "OffsetsConfig",
    "OffsetsManager",
    "TimeBase",
    "ensure_offsets_topic",
    "java_string_hash",
    "partition_for",
]
