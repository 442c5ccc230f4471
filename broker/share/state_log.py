"""`__share_group_state` on the log: the durable share-partition states, written and reloaded.

Each write is one record appended to the key's partition: a ShareSnapshot (the whole state) when the
share partition has none yet, is (re)initialized, or has had
`share.coordinator.snapshot.update.records.per.snapshot` updates since its last one; a ShareUpdate
(the changed state batches and the start offset) otherwise. Deleting a share partition's state writes
tombstones for both keys. The topic is created on the first write (`delete` policy, infinite
retention, as Kafka creates it); replay reads every record in order, snapshots replacing and updates
merging, so that the latest state of every share partition is back in memory.

Each record carries the share partition's delivery-complete count (KIP-1226: records at or past the
start offset whose delivery is complete), which DescribeShareGroupOffsets' lag leaves out. As Kafka's
share coordinator keeps it: a write at the persisted start offset keeps the larger of the two counts, a
write behind it (or without a start offset) keeps the persisted count, one ahead of it replaces it; an
initialized state has none complete; replay takes each record's count as it is (-1, unknown, from
records written before the count existed).

As in Kafka, a share partition's records before its latest snapshot are redundant, so the log is
pruned rather than compacted: every `share.coordinator.state.topic.prune.interval.ms` each state
partition's log start moves up to the oldest latest-snapshot of the keys it still holds (to its end
when it holds none). So that an idle key does not hold that point back for ever, every
`share.coordinator.cold.partition.snapshot.interval.ms` a key whose snapshot is that old, and has
records after it, is snapshotted again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.log.batch import CONTROL_MASK
from kafkito.broker.log.errors import LogError
from kafkito.broker.offsets.batches import batch_records, build_batch, iter_batches
from kafkito.broker.share.state_codec import (
    SHARE_STATE_TOPIC,
    SNAPSHOT,
    UPDATE,
    ShareStateKey,
    ShareStateValue,
    StateFormatError,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    state_partition,
)
from kafkito.broker.share.states import StateBatch, runs

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.share")

STATE_TOPIC_CONFIGS = {
    "cleanup.policy": "delete",
    "retention.ms": "-1",
    "compression.type": "uncompressed",
    "min.insync.replicas": "1",
}
_READ_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class StateLogConfig:
    num_partitions: int = 50  # share.coordinator.state.topic.num.partitions
    segment_bytes: int = 104_857_600  # share.coordinator.state.topic.segment.bytes
    updates_per_snapshot: int = 500  # share.coordinator.snapshot.update.records.per.snapshot
    prune_interval_ms: int = 300_000  # share.coordinator.state.topic.prune.interval.ms
    cold_snapshot_interval_ms: int = 300_000  # share.coordinator.cold.partition.snapshot.interval.ms


@dataclass(slots=True)
class PersistedState:
    """What `__share_group_state` holds for one share partition, merged."""

    start_offset: int
    states: dict[int, tuple[int, int]] = field(default_factory=dict)  # offset -> (state, count)
    snapshot_epoch: int = 0
    state_epoch: int = 0
    updates: int = 0  # ShareUpdates since the last snapshot
    snapshot_offset: int = -1  # where the latest snapshot is in the key's state partition
    snapshot_ms: int = 0  # when it was written
    delivery_complete: int = -1  # offsets at or past the start whose delivery is complete; -1 unknown

    def merge(self, start_offset: int, batches: list[StateBatch], delivery_complete: int) -> None:
        self.delivery_complete = delivery_complete
        if start_offset >= 0:
            self.start_offset = start_offset
        for b in batches:
            for offset in range(b.first_offset, b.last_offset + 1):
                self.states[offset] = (b.delivery_state, b.delivery_count)
        for offset in [o for o in self.states if o < self.start_offset]:
            del self.states[offset]

    def batches(self) -> list[StateBatch]:
        return runs([(o, s, c) for o, (s, c) in sorted(self.states.items())])


class ShareStateLog:
    """The persisted states by (group, topic id, partition), kept in step with the log."""

    def __init__(self, logs: LogManager, config: StateLogConfig, wall_ms: Callable[[], int]) -> None:
        self._logs = logs
        self.config = config
        self._wall_ms = wall_ms
        self.num_partitions = config.num_partitions
        self.states: dict[ShareStateKey, PersistedState] = {}
        self.appends = 0

    # -- writes --------------------------------------------------------------------------------

    def initialize(self, key: ShareStateKey, start_offset: int) -> None:
        """A new state epoch at `start_offset`, nothing in flight: a snapshot."""
        old = self.states.get(key)
        epoch = (old.state_epoch + 1) if old else 0
        state = PersistedState(
            start_offset, state_epoch=epoch, delivery_complete=0 if start_offset >= 0 else -1
        )
        if old is not None:
            state.snapshot_epoch = old.snapshot_epoch + 1
        self._snapshot(key, state)

    def write(
        self, key: ShareStateKey, start_offset: int, delivery_complete: int, batches: list[StateBatch]
    ) -> None:
        """A share partition's changes: an update, or a snapshot when one is due."""
        state = self.states.get(key)
        if state is None:
            state = PersistedState(start_offset)
            state.merge(start_offset, batches, delivery_complete)
            self._snapshot(key, state)
            return
        complete = _delivery_complete(state, start_offset, delivery_complete)
        start_offset = max(start_offset, state.start_offset)
        if state.updates >= self.config.updates_per_snapshot:
            state.merge(start_offset, batches, complete)
            state.snapshot_epoch += 1
            self._snapshot(key, state)
            return
        value = ShareStateValue(UPDATE, state.snapshot_epoch, start_offset, batches)
        value.delivery_complete_count = complete
        self._append(key, [(encode_key(UPDATE, key), encode_value(value))])
        state.merge(start_offset, batches, complete)
        state.updates += 1

    def delete(self, key: ShareStateKey) -> None:
        if self.states.pop(key, None) is not None:
            self._append(key, [(encode_key(SNAPSHOT, key), None), (encode_key(UPDATE, key), None)])

    def _snapshot(self, key: ShareStateKey, state: PersistedState) -> None:
        now = self._wall_ms()
        batches = state.batches()
        epoch = state.state_epoch
        value = ShareStateValue(SNAPSHOT, state.snapshot_epoch, state.start_offset, batches, epoch)
        value.create_timestamp = value.write_timestamp = now
        value.delivery_complete_count = state.delivery_complete
        state.snapshot_offset = self._append(key, [(encode_key(SNAPSHOT, key), encode_value(value))])
        state.snapshot_ms = now
        state.updates = 0
        self.states[key] = state

    def _append(self, key: ShareStateKey, records: list[tuple[bytes, bytes | None]]) -> int:
        """Append at once: the offset of the first record. A failure is logged and the state kept in
        memory (the next write retries nothing: the following snapshot carries it); -1 then, which
        holds the prune point where it is until a snapshot is written."""
        try:
            self._ensure_topic()
            partition = self.partition_of(key)
            info = self._logs.get_log(SHARE_STATE_TOPIC, partition).append(
                build_batch(records, self._wall_ms())
            )
            self.appends += 1
            return info.base_offset
        except (LogError, OSError) as exc:
            log.error("share.state_write_failed", group=key.group_id, partition=key.partition, error=str(exc))
            state = self.states.get(key)
            if state is not None:
                state.updates = self.config.updates_per_snapshot  # the next write is a full snapshot
            return -1

    def partition_of(self, key: ShareStateKey) -> int:
        return state_partition(key.group_id, key.topic_id, key.partition, self.num_partitions)

    def _ensure_topic(self) -> None:
        info = self._logs.topic(SHARE_STATE_TOPIC)
        if info is None:
            configs = dict(STATE_TOPIC_CONFIGS, **{"segment.bytes": str(self.config.segment_bytes)})
            info = self._logs.create_topic(SHARE_STATE_TOPIC, self.config.num_partitions, 1, configs)
            log.info("share.state_topic_created", partitions=info.partitions)
        self.num_partitions = info.partitions

    # -- reload --------------------------------------------------------------------------------

    def load(self) -> int:
        """Replay every partition of an existing topic; the number of records read."""
        info = self._logs.topic(SHARE_STATE_TOPIC)
        if info is None:
            return 0
        self.num_partitions = info.partitions
        read = 0
        for partition in range(info.partitions):
            for offset, raw_key, raw_value in self._records(partition):
                read += 1
                try:
                    self._replay(offset, raw_key, raw_value)
                except StateFormatError as exc:
                    log.warning("share.undecodable_state", partition=partition, error=str(exc))
        return read

    def _records(self, partition: int) -> Iterator[tuple[int, bytes, bytes | None]]:
        plog = self._logs.get_log(SHARE_STATE_TOPIC, partition)
        position, end = plog.log_start_offset, plog.log_end_offset
        while position < end:
            chunk = plog.read(position, _READ_BYTES)
            advanced = False
            for header, batch in iter_batches(chunk):
                if header.next_offset <= position:
                    continue
                position = header.next_offset
                advanced = True
                if header.attributes & CONTROL_MASK:
                    continue
                for record in batch_records(batch, header):
                    if record.key is not None:
                        yield record.offset, record.key, record.value
            if not advanced:
                break

    def _replay(self, offset: int, raw_key: bytes, raw_value: bytes | None) -> None:
        kind, key = decode_key(raw_key)
        if raw_value is None:
            self.states.pop(key, None)
            return
        value = decode_value(kind, raw_value)
        state = self.states.get(key)
        if kind == SNAPSHOT or state is None:
            state = PersistedState(value.start_offset, {}, value.snapshot_epoch, value.state_epoch)
            state.merge(value.start_offset, value.batches, value.delivery_complete_count)
            state.snapshot_offset = offset
            state.snapshot_ms = value.write_timestamp if kind == SNAPSHOT else self._wall_ms()
            self.states[key] = state
            return
        state.merge(value.start_offset, value.batches, value.delivery_complete_count)
        state.updates += 1

    # -- pruning -------------------------------------------------------------------------------

    def snapshot_cold(self) -> int:
        """Snapshot again every key whose latest snapshot is `cold_snapshot_interval_ms` old and has
        records after it in its partition; how many were written."""
        if self._logs.topic(SHARE_STATE_TOPIC) is None:
            return 0
        now = self._wall_ms()
        written = 0
        for key, state in list(self.states.items()):
            if now - state.snapshot_ms < self.config.cold_snapshot_interval_ms:
                continue
            end = self._logs.get_log(SHARE_STATE_TOPIC, self.partition_of(key)).log_end_offset
            if state.snapshot_offset >= 0 and state.snapshot_offset + 1 >= end:
                continue  # its snapshot is the partition's last record: nothing it holds back
            self._snapshot(key, state)
            written += 1
        return written

    def prune(self) -> int:
        """Move each state partition's log start up to the oldest latest-snapshot of its keys (to its
        end when it has none); how many records that made unreadable."""
        info = self._logs.topic(SHARE_STATE_TOPIC)
        if info is None:
            return 0
        oldest: dict[int, int] = {}
        for key, state in self.states.items():
            partition = self.partition_of(key)
            oldest[partition] = min(oldest.get(partition, state.snapshot_offset), state.snapshot_offset)
        pruned = 0
        for partition in range(info.partitions):
            plog = self._logs.get_log(SHARE_STATE_TOPIC, partition)
            point = oldest.get(partition, plog.log_end_offset)
            if point > plog.log_start_offset:  # a failed snapshot (-1) holds everything
                before = plog.log_start_offset
                try:
                    pruned += plog.delete_records(point) - before
                except (LogError, OSError) as exc:
                    log.error("share.state_prune_failed", partition=partition, error=str(exc))
        if pruned:
            log.info("share.state_pruned", records=pruned)
        return pruned


def _delivery_complete(state: PersistedState, start_offset: int, delivery_complete: int) -> int:
    """The count a write leaves, as Kafka's share coordinator merges it (see the module's docstring)."""
    if start_offset == state.start_offset:
        return max(delivery_complete, state.delivery_complete)
    if start_offset < state.start_offset:
        return state.delivery_complete
    return delivery_complete
