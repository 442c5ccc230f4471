"""The transaction coordinator's settings, with Kafka's names and defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class TransactionConfig:
    # transaction.max.timeout.ms: the longest transaction.timeout.ms a producer may ask for.
    max_timeout_ms: int = 900_000
    # transactional.id.expiration.ms: an idle id (no open transaction) is removed after this.
    transactional_id_expiration_ms: int = 604_800_000
    # transaction.abort.timed.out.transaction.cleanup.interval.ms: how often timed-out
    # transactions are looked for (and aborted).
    abort_timed_out_interval_ms: int = 10_000
    # transaction.remove.expired.transaction.cleanup.interval.ms: how often expired ids are removed.
    remove_expired_interval_ms: int = 3_600_000
    # transaction.state.log.num.partitions
    state_log_num_partitions: int = 50
    # offsets.topic.num.partitions: AddOffsetsToTxn adds the group's __consumer_offsets partition.
    offsets_topic_num_partitions: int = 50
    # kafkito's own: the pause before markers (or a Complete* record) that failed are tried again.
    marker_retry_backoff_ms: int = 100


# The `__transaction_state` topic's own configs, as Kafka creates it: compacted, so the latest
# record of each id (or its tombstone) is what a restart reads.
TRANSACTION_STATE_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "compact",
    "compression.type": "uncompressed",
    "segment.bytes": "104857600",  # transaction.state.log.segment.bytes
}
