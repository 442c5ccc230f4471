"""Reads one `__consumer_offsets` partition back as coordinator records, a bounded chunk per step."""

from __future__ import annotations

import struct
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    MemberMetadata,
    OffsetCommitRecord,
)
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.broker.offsets.batches import batch_records, iter_batches, key_values
from kafkito.broker.offsets.records import (
    GroupKey,
    RecordFormatError,
    decode_group_value,
    decode_key,
    decode_offset_key,
    decode_offset_value,
)

if TYPE_CHECKING:
    from kafkito.broker.log.batch import BatchHeader
    from kafkito.broker.log.partition_log import PartitionLog
    from kafkito.broker.offsets.log_sink import TimeBase

log = structlog.get_logger("kafkito.offsets")

READ_BYTES = 256 * 1024
_CONTROL_KEY = struct.Struct(">hh")
_COMMIT_MARKER = 1


@dataclass(slots=True)
class DecodedPartition:
    """The live content of a partition as coordinator records: group records first, then offsets."""

    records: list[CoordinatorRecord] = field(default_factory=list)
    group_ids: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    keys: int = 0
    skipped: int = 0


def read_latest(plog: PartitionLog, budget: int) -> Generator[None, None, dict[bytes, bytes | None]]:
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
            since_yield += _take(header, batch, latest, pending)
            if since_yield >= budget:
                since_yield = 0
                yield
        if not advanced:
            break
    return latest


def _take(
    header: BatchHeader,
    batch: bytes,
    latest: dict[bytes, bytes | None],
    pending: dict[int, dict[bytes, bytes | None]],
) -> int:
    """Apply one batch to the last-value map (a transaction's records wait for its COMMIT marker)."""
    if header.is_control:
        txn = pending.pop(header.producer_id, None)
        if txn is not None and _is_commit(batch, header):
            latest.update(txn)
        return 0
    target = latest
    if header.is_transactional:
        target = pending.setdefault(header.producer_id, {})
    for key, value in key_values(batch, header):
        if key is not None:
            target[key] = value
    return header.record_count


def _is_commit(batch: bytes, header: BatchHeader) -> bool:
    for record in batch_records(batch, header):
        if record.key is not None and len(record.key) >= 4:
            return bool(_CONTROL_KEY.unpack_from(record.key)[1] == _COMMIT_MARKER)
    return False


def decode_records(
    latest: dict[bytes, bytes | None], time: TimeBase, budget: int
) -> Generator[None, None, DecodedPartition]:
    """Turn the raw last-value map into coordinator records (clock-based timestamps) to replay.

    Tombstones that survive compaction are dropped: each key appears once, so they delete nothing.
    """
    state = DecodedPartition(keys=len(latest))
    offsets: list[CoordinatorRecord] = []
    for i, (raw_key, raw_value) in enumerate(latest.items(), 1):
        if i % budget == 0:
            yield
        if raw_value is None:
            continue
        try:
            record = _decode(raw_key, raw_value, time)
        except RecordFormatError as exc:
            state.skipped += 1
            log.warning("offsets.undecodable_record", key=raw_key.hex(), error=str(exc))
            continue
        if record is None:
            state.skipped += 1
        elif isinstance(record, OffsetCommitRecord):
            offsets.append(record)
        else:
            state.records.append(record)
    state.records.extend(offsets)
    state.group_ids = dict.fromkeys(r.group_id for r in state.records)
    return state


def _decode(raw_key: bytes, raw_value: bytes, time: TimeBase) -> CoordinatorRecord | None:
    from_wall = time.from_wall
    offset_key = decode_offset_key(raw_key)
    if offset_key is not None:
        group_id, topic, partition = offset_key
        v = decode_offset_value(raw_value)
        offset = OffsetAndMetadata(
            v.offset,
            v.metadata,
            v.leader_epoch,
            from_wall(v.commit_timestamp),
            None if v.expire_timestamp is None else from_wall(v.expire_timestamp),
        )
        return OffsetCommitRecord(group_id, TopicPartition(topic, partition), offset)
    key = decode_key(raw_key)
    if not isinstance(key, GroupKey):
        return None
    value = decode_group_value(raw_value)
    members = tuple(
        MemberMetadata(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout,
            m.session_timeout,
            m.subscription,
            m.assignment,
        )
        for m in value.members
    )
    ts = value.current_state_timestamp
    return GroupMetadataRecord(
        key.group,
        value.protocol_type,
        value.generation,
        value.protocol,
        value.leader,
        members,
        None if ts < 0 else from_wall(ts),
    )
