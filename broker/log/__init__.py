"""Topic partition logs on disk: segments of magic-v2 record batches, stored as producers sent them.

Layout under the data dir: the metadata log `metadata-*.log` / `metadata-*.checkpoint` (topic names,
ids, partition counts, config overrides: one appended batch per change, see `metadata_log`) and
one `<topic>-<partition>/` directory per partition holding Kafka-named segment files
(`00000000000000000000.log`), `partition.metadata` (topic id), `log-start-offset`, `cleaner-offset`,
`recovery-point`, `.clean-shutdown` after a clean close, `*.log.corrupt` copies of segments
recovery repaired (`recovery.py`), and `<base offset>.txnindex` beside a segment holding ABORT
markers (Kafka's aborted-transactions index, `txn_index.py`). Offset and time indexes live in memory
and are rebuilt on open; the aborted index is rebuilt from the control batches and its files
rewritten to match. `segmented_log.SegmentedLog` keeps the segments; `PartitionLog` adds what
producers write (offsets, idempotence, transactions: `producer_state`, `control`, `txn_log`).

Contract for handlers: every error is a `LogError` (a `protocol.errors.KafkaError`) whose `code`
goes in the response. `LogManager.get_log()` gives a `PartitionLog`; `append()` returns an
`AppendInfo`, `append_marker()` writes a COMMIT/ABORT control batch, `read()` returns whole batches
(up to `last_stable_offset` for read_committed, with `aborted_transactions()`),
`offset_for_timestamp()` / `max_timestamp_offset()` answer ListOffsets. Periodic work:
`LogManager.enforce_retention()`, `compact()`, `flush_due()`.
"""

from kafkito.broker.log.config import ConfigEntry, ConfigSource, ConfigType, LogConfig
from kafkito.broker.log.errors import LogError
from kafkito.broker.log.manager import LogManager, TopicInfo
from kafkito.broker.log.partition_log import AppendInfo, PartitionLog, TimestampOffset

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
