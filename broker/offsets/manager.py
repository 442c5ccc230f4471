"""`__consumer_offsets` for the broker: the topic, the coordinator's record sink, reload, expiry."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.chunked_load import ChunkedLoad, Defer, run_all
from kafkito.broker.config import default
from kafkito.broker.coordinator.offset_expiry import expired_offsets
from kafkito.broker.log.errors import LogError
from kafkito.broker.offsets.log_sink import OFFSETS_TOPIC, LogRecordSink
from kafkito.purgatory import Clock

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.group import ClassicGroup
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup
    from kafkito.broker.coordinator.coordinator import GroupCoordinator
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.offsets")

LOAD_CHUNK_RECORDS = 5_000
LOAD_INLINE_BYTES = 1 << 20


@dataclass(slots=True, frozen=True)
class OffsetsConfig:
    """The `offsets.*` settings this package uses; defaults from the broker's one table."""

    num_partitions: int = default("offsets.topic.num.partitions")
    segment_bytes: int = default("offsets.topic.segment.bytes")
    retention_ms: int = default("offsets.retention.minutes") * 60_000
    retention_check_interval_ms: int = default("offsets.retention.check.interval.ms")
    load_chunk_records: int = LOAD_CHUNK_RECORDS  # records replayed between yields to the loop
    load_inline_bytes: int = LOAD_INLINE_BYTES  # a log this small loads at once, before serving

    @classmethod
    def from_broker(cls, config: Any) -> OffsetsConfig:
        """From the broker's Config; `offsets.retention.ms` in the extras overrides the minutes."""
        retention_ms = config.offsets_retention_ms
        extra = getattr(config, "extra", {})
        if "offsets.retention.ms" in extra:
            retention_ms = int(extra["offsets.retention.ms"])
        return cls(
            num_partitions=config.offsets_topic_num_partitions,
            segment_bytes=config.offsets_topic_segment_bytes,
            retention_ms=retention_ms,
            retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            load_chunk_records=int(extra.get("offsets.load.chunk.records", LOAD_CHUNK_RECORDS)),
            load_inline_bytes=int(extra.get("offsets.load.inline.bytes", LOAD_INLINE_BYTES)),
        )


def ensure_offsets_topic(logs: LogManager, config: OffsetsConfig) -> int:
    """Create `__consumer_offsets` (compacted) if missing; its partition count, which never changes."""
    info = logs.topic(OFFSETS_TOPIC)
    if info is None:
        info = logs.create_topic(
            OFFSETS_TOPIC,
            config.num_partitions,
            1,
            {
                "cleanup.policy": "compact",
                "segment.bytes": str(config.segment_bytes),
                "compression.type": "producer",
            },
        )
        log.info("offsets.topic_created", partitions=info.partitions)
    elif info.partitions != config.num_partitions:
        log.warning(
            "offsets.partition_count_kept",
            configured=config.num_partitions,
            existing=info.partitions,
        )
    return info.partitions


class OffsetsManager:
    """Owns the offsets topic on behalf of the coordinator.

    Every partition counts as loading from construction until `load` has replayed it, so group
    requests get COORDINATOR_LOAD_IN_PROGRESS until then. Loading runs in chunks handed to `defer`
    (the broker passes `loop.call_soon`), so other connections are served meanwhile.
    """

    def __init__(self, logs: LogManager, config: OffsetsConfig, clock: Clock) -> None:
        self.logs = logs
        self.config = config
        self.clock = clock
        # Created on first use, as Kafka does: the first group write, FindCoordinator for a group or a
        # Metadata request naming it (`ensure_topic`). Its 50 partitions cost a first start ~5 ms.
        exists = self._created = logs.topic(OFFSETS_TOPIC) is not None
        self.num_partitions = ensure_offsets_topic(logs, config) if exists else config.num_partitions
        self.sink = LogRecordSink(logs, self.num_partitions, clock, None if exists else self.ensure_topic)
        if exists:
            self.sink.loading.update(range(self.num_partitions))
        self._coordinator: GroupCoordinator | None = None
        self._load = ChunkedLoad()

    @property
    def loaded(self) -> bool:
        return not self.sink.loading

    def ensure_topic(self) -> bool:
        """Create `__consumer_offsets` with the partition count in use, unless it exists or existed
        (a topic deleted under the broker is not brought back: group writes fail, as before).

        False if creating it failed (logged; the next group write or FindCoordinator tries again).
        """
        if self._created:
            return True
        try:
            ensure_offsets_topic(self.logs, replace(self.config, num_partitions=self.num_partitions))
        except (LogError, OSError) as exc:
            log.error("offsets.topic_create_failed", error=str(exc))
            return False
        self._created = True
        return True

    # -- loading --------------------------------------------------------------------------------

    def load(self, coordinator: GroupCoordinator, defer: Defer) -> None:
        """Start replaying every partition into `coordinator`, one chunk per `defer`red call.

        A log of at most `load_inline_bytes` is replayed at once instead: a fresh or small broker
        then answers group requests from its first connection.
        """
        size = sum(self.logs.get_log(OFFSETS_TOPIC, p).size_bytes for p in self.sink.loading)
        if size <= self.config.load_inline_bytes:
            self.load_now(coordinator)
            return
        self._coordinator = coordinator
        self._load.start(self._load_all(coordinator), defer)

    def load_now(self, coordinator: GroupCoordinator) -> None:
        """Replay everything before returning (tests, benchmarks, tools)."""
        self._coordinator = coordinator
        run_all(self._load_all(coordinator))

    def stop_loading(self) -> None:
        """Abandon a load in progress (the broker is stopping)."""
        self._load.stop()

    def _load_all(self, coordinator: GroupCoordinator) -> Generator[None, None, None]:
        if self.logs.topic(OFFSETS_TOPIC) is None:  # not created yet (on first use): nothing to replay
            log.info("offsets.loaded", partitions=0, ms=0)
            return
        started = self.clock.now_ms()
        for partition in range(self.num_partitions):
            try:
                yield from self._load_partition(partition, coordinator)
            except Exception:
                # Leave it loading: serving its groups without their offsets could lose commits.
                log.exception("offsets.partition_load_failed", partition=partition)
        log.info("offsets.loaded", partitions=self.num_partitions, ms=self.clock.now_ms() - started)

    def _load_partition(self, partition: int, coordinator: GroupCoordinator) -> Generator[None, None, None]:
        plog = self.logs.get_log(OFFSETS_TOPIC, partition)
        if plog.size_bytes == 0:  # nothing to replay (most partitions of a development broker)
            self.sink.loading.discard(partition)
            yield
            return
        # The reader and the record formats, not imported by a start with no group records to load.
        from kafkito.broker.offsets.loader import decode_records, read_partition

        started = self.clock.now_ms()
        budget = max(self.config.load_chunk_records, 1)
        content = yield from read_partition(plog, budget)
        state = yield from decode_records(content, budget)
        # The same replay as at run time: the coordinator's state is what the records say.
        step = max(budget // 10, 1)
        for i, record in enumerate(state.records, 1):
            coordinator.replay(record)
            if i % step == 0:
                yield
        coordinator.on_loaded(state.group_ids)
        groups = len(state.group_ids)
        self.sink.loading.discard(partition)
        yield  # one partition per step at least: its groups are served before the next one loads
        if content.latest:
            log.info(
                "offsets.partition_loaded",
                partition=partition,
                keys=state.keys,
                groups=groups,
                skipped=state.skipped,
                ms=self.clock.now_ms() - started,
            )

    # -- expiry ---------------------------------------------------------------------------------

    def expire(self) -> int:
        """One retention pass (every offsets.retention.check.interval.ms); returns offsets removed."""
        coordinator = self._coordinator
        if coordinator is None:
            return 0
        now = self.clock.now_ms()
        removed = dead = 0
        groups: list[ClassicGroup | ConsumerGroup] = [*coordinator.groups(), *coordinator.consumer_groups()]
        for group in groups:
            if self.sink.is_loading(group.group_id):
                continue
            expired = expired_offsets(group, now, self.config.retention_ms)
            held = coordinator.pending_transactional_offsets(group.group_id) if expired else None
            if held:  # as Kafka: not while a transaction holds pending offsets for the partition
                expired = [tp for tp in expired if not any(tp in p for p in held.values())]
            removed += len(expired)
            dead += coordinator.expire_offsets(group.group_id, expired)
        if removed or dead:
            log.info("offsets.expired", offsets=removed, groups_dead=dead)
        return removed
