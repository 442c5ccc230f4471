"""Topic partition logs on disk: segments of magic-v2 record batches, stored as producers sent them."""

from broker.log.config import ConfigEntry, ConfigSource, ConfigType, LogConfig
from broker.log.errors import LogError
from broker.log.manager import LogManager, TopicInfo
from broker.log.partition_log import AppendInfo, PartitionLog, TimestampOffset

__all__ = [
    "AppendInfo",
    "ConfigEntry",
    "ConfigSource",
    "ConfigType",
    "LogConfig",
    "LogError",
    "LogManager",
    "PartitionLog",
    "TimestampOffset",
    "TopicInfo",
]
