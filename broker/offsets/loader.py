"""Rebuilds groups and offsets from one `__consumer_offsets` partition, a bounded chunk per step."""

from __future__ import annotations

import struct
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.group import Group, GroupState
from kafkito.broker.coordinator.member import Member
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.broker.offsets.batches import batch_records, iter_batches, key_values
from kafkito.broker.offsets.records import (
    GroupKey,
    GroupValue,
    RecordFormatError,
    decode_group_value,
    decode_key,
    decode_offset_key,
    decode_offset_value,
)

if TYPE_CHECKING:
    from kafkito.broker.log.batch import BatchHeader
    from kafkito.broker.log.partition_log import PartitionLog
    from kafkito.broker.offsets.store import TimeBase

log = structlog.get_logger("kafkito.offsets")

READ_BYTES = 256 * 1024
_CONTROL_KEY = struct.Struct(">hh")
_COMMIT_MARKER = 1


@dataclass(slots=True)
class PartitionState:
    """The live content of a partition once replayed: the last value of every key still present."""

    groups: dict[str, GroupValue] = field(default_factory=dict)
    offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = field(default_factory=dict)
    keys: int = 0
    skipped: int = 0


def replay(plog: PartitionLog, budget: int) -> Generator[None, None, dict[bytes, bytes | None]]:
    """Read the partition start to end; the last record per key wins (tombstones included).

    Yields after about `budget` records so the caller can let other work run, and returns the map
    of raw key -> raw value (None = tombstone). Keys are decoded only once,
    afterwards, so replay costs a dict store per record however long the history is.
    Transactional records count only once their COMMIT marker is read.
    """
    latest: dict[bytes, bytes | None] = {}
    pending: dict[int, dict[bytes, bytes | None]] = {}
    position = plog.log_start_offset
    end = plog.log_end_offset
    since_yield = 0
    while position < end:
        chunk = plog.read(position, READ_BYTES)
        if not chunk:
            break
        advanced = False
        for header, batch in iter_batches(chunk):
            if header.next_offset <= position:
                continue
            position = header.next_offset
            advanced = True
            if header.is_control:
                txn = pending.pop(header.producer_id, None)
                if txn is not None and _is_commit(batch, header):
                    latest.update(txn)
                continue
            target = latest
            if header.is_transactional:
                target = pending.setdefault(header.producer_id, {})
            for key, value in key_values(batch, header):
                if key is not None:
                    target[key] = value
            since_yield += header.record_count
            if since_yield >= budget:
                since_yield = 0
                yield
        if not advanced:
            break
    return latest


def _is_commit(batch: bytes, header: BatchHeader) -> bool:
    for record in batch_records(batch, header):
        if record.key is not None and len(record.key) >= 4:
            return bool(_CONTROL_KEY.unpack_from(record.key)[1] == _COMMIT_MARKER)
    return False


def decode_state(
    latest: dict[bytes, bytes | None], time: TimeBase, budget: int
) -> Generator[None, None, PartitionState]:
    """Turn the raw last-value map into group records and offsets (clock-based timestamps)."""
    state = PartitionState(keys=len(latest))
    from_wall = time.from_wall
    for i, (raw_key, raw_value) in enumerate(latest.items(), 1):
        if i % budget == 0:
            yield
        if raw_value is None:
            continue
        try:
            offset_key = decode_offset_key(raw_key)
            if offset_key is not None:
                group_id, topic, partition = offset_key
                v = decode_offset_value(raw_value)
                offsets = state.offsets.get(group_id)
                if offsets is None:
                    offsets = state.offsets[group_id] = {}
                offsets[TopicPartition(topic, partition)] = OffsetAndMetadata(
                    v.offset,
                    v.metadata,
                    v.leader_epoch,
                    from_wall(v.commit_timestamp),
                    None if v.expire_timestamp is None else from_wall(v.expire_timestamp),
                )
                continue
            key = decode_key(raw_key)
            if isinstance(key, GroupKey):
                state.groups[key.group] = decode_group_value(raw_value)
            else:
                state.skipped += 1
        except RecordFormatError as exc:
            state.skipped += 1
            log.warning("offsets.undecodable_record", key=raw_key.hex(), error=str(exc))
    return state


def build_group(
    group_id: str,
    value: GroupValue | None,
    offsets: dict[TopicPartition, OffsetAndMetadata],
    time: TimeBase,
    now_ms: int,
) -> Group:
    """A group as Kafka loads it: Stable with its members and assignments, or Empty without members."""
    if value is None or value.protocol is None or not value.members:
        group = Group(group_id, now_ms, GroupState.EMPTY)
    else:
        group = Group(group_id, now_ms, GroupState.STABLE)
        # The leader goes in first: a group's first member is its leader.
        members = sorted(value.members, key=lambda m: m.member_id != value.leader)
        for m in members:
            group.add(
                Member(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout,
                    m.session_timeout,
                    value.protocol_type,
                    [(value.protocol, m.subscription)],
                    assignment=m.assignment,
                )
            )
    if value is not None:
        group.generation_id = value.generation
        group.protocol_type = value.protocol_type or None
        group.protocol_name = value.protocol if group.size else None
        ts = value.current_state_timestamp
        group.state_timestamp_ms = None if ts < 0 else time.from_wall(ts)
        group.subscribed_topics = group.compute_subscribed_topics()
    group.offsets.update(offsets)
    return group


def build_groups(state: PartitionState, time: TimeBase, now_ms: int) -> Iterator[Group]:
    """Every group the partition holds: those with a group record, then those with only offsets."""
    for group_id, value in state.groups.items():
        yield build_group(group_id, value, state.offsets.get(group_id, {}), time, now_ms)
    for group_id, offsets in state.offsets.items():
        if group_id not in state.groups:
            yield build_group(group_id, None, offsets, time, now_ms)
