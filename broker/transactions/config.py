"""The transaction coordinator's settings: a typed view of the broker's `transaction*` properties."""

from __future__ import annotations

from dataclasses import dataclass

from kafkito.broker.config import Config, default

MARKER_RETRY_BACKOFF_MS = 100  # kafkito's own, not a Kafka property


@dataclass(slots=True, frozen=True)
class TransactionConfig:
    """What the coordinator reads, under shorter names; defaults from the broker's one table."""

    # the longest transaction.timeout.ms a producer may ask for
    max_timeout_ms: int = default("transaction.max.timeout.ms")
    # an idle id (no open transaction) is removed after this
    transactional_id_expiration_ms: int = default("transactional.id.expiration.ms")
    # how often timed-out transactions are looked for (and aborted)
    abort_timed_out_interval_ms: int = default("transaction.abort.timed.out.transaction.cleanup.interval.ms")
    # how often expired ids are removed
    remove_expired_interval_ms: int = default("transaction.remove.expired.transaction.cleanup.interval.ms")
    state_log_num_partitions: int = default("transaction.state.log.num.partitions")
    # AddOffsetsToTxn adds the group's __consumer_offsets partition
    offsets_topic_num_partitions: int = default("offsets.topic.num.partitions")
    # the pause before markers (or a Complete* record) that failed are tried again
    marker_retry_backoff_ms: int = MARKER_RETRY_BACKOFF_MS

    @classmethod
    def from_config(cls, config: Config) -> TransactionConfig:
        """The broker's values of the properties above."""
        return cls(
            max_timeout_ms=config.transaction_max_timeout_ms,
            transactional_id_expiration_ms=config.transactional_id_expiration_ms,
            abort_timed_out_interval_ms=config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
            remove_expired_interval_ms=config.transaction_remove_expired_transaction_cleanup_interval_ms,
            state_log_num_partitions=config.transaction_state_log_num_partitions,
            offsets_topic_num_partitions=config.offsets_topic_num_partitions,
        )


# The `__transaction_state` topic's own configs, as Kafka creates it: compacted, so the latest
# record of each id (or its tombstone) is what a restart reads.
TRANSACTION_STATE_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "compact",
    "compression.type": "uncompressed",
    "segment.bytes": str(default("transaction.state.log.segment.bytes")),
}
