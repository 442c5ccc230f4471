"""Reads one `__consumer_offsets` partition back as coordinator records, a bounded chunk per step."""

from __future__ import annotations

import struct
from collections.abc import Generator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, cast

import structlog

from kafkito.broker.coordinator.consumer.records import ConsumerGroupPartitionMetadataRecord
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    MemberMetadata,
    OffsetCommitRecord,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.broker.log.batch import (
    COMPRESSION_MASK,
    CONTROL_MASK,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    TRANSACTIONAL_MASK,
    BatchHeader,
    parse_header,
)
from kafkito.broker.offsets.batches import batch_records
from kafkito.broker.offsets.commit_decoder import CommitDecoder
from kafkito.broker.offsets.consumer_log import REPLAY_ORDER, decode_consumer_record
from kafkito.broker.offsets.consumer_records import ConsumerGroupKey
from kafkito.broker.offsets.latest_values import LatestValues
from kafkito.broker.offsets.records import (
    GroupKey,
    RecordFormatError,
    decode_group_value,
    decode_key,
    decode_offset_key,
    decode_offset_value,
)
from kafkito.broker.offsets.share_records import REPLAY_ORDER as SHARE_REPLAY_ORDER
from kafkito.broker.offsets.share_records import decode_share_record, is_share_key
from kafkito.broker.offsets.streams_records import REPLAY_ORDER as STREAMS_REPLAY_ORDER
from kafkito.broker.offsets.streams_records import decode_streams_record, is_streams_key

if TYPE_CHECKING:
    from kafkito.broker.log.partition_log import PartitionLog

log = structlog.get_logger("kafkito.offsets")

READ_BYTES = 256 * 1024
_CONTROL_KEY = struct.Struct(">hh")
_COMMIT_MARKER = 1
# What the read loop needs of a batch header: base offset, length, attributes, last offset delta
# and record count (see HEADER)
_FIELDS = struct.Struct(">qi9xhi30xi")
_NOT_PLAIN = CONTROL_MASK | TRANSACTIONAL_MASK | COMPRESSION_MASK
_GROUP_ID = attrgetter("group_id")


@dataclass(slots=True)
class DecodedPartition:
    """The live content of a partition as coordinator records: group records first, then offsets."""

    records: list[CoordinatorRecord] = field(default_factory=list)
    group_ids: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    keys: int = 0
    skipped: int = 0


@dataclass(slots=True)
class PartitionContent:
    """What a partition's log says, key by key, as Kafka's replay order resolves it.

    `latest`: the last value per raw key (None = tombstone), transactional ones counted once their
    COMMIT marker is read. `open_txns`: the records of transactions with no marker yet, as
    (log offset, producer id, producer epoch, key, value). `written_at`: the log offset of the
    value in `latest`, for the keys whose order against those open records matters.
    """

    latest: dict[bytes, bytes | None] = field(default_factory=dict)
    pending: dict[int, dict[bytes, tuple[int, bytes | None]]] = field(default_factory=dict)
    epochs: dict[int, int] = field(default_factory=dict)
    written_at: dict[bytes, int] = field(default_factory=dict)

    def open_txns(self) -> list[tuple[int, int, int, bytes, bytes | None]]:
        return sorted(
            (offset, pid, self.epochs.get(pid, -1), key, value)
            for pid, records in self.pending.items()
            for key, (offset, value) in records.items()
        )


def read_latest(plog: PartitionLog, budget: int) -> Generator[None, None, dict[bytes, bytes | None]]:
    """The last value per raw key of the partition (see `read_partition`); open transactions left out."""
    content = yield from read_partition(plog, budget)
    return content.latest


def read_partition(plog: PartitionLog, budget: int) -> Generator[None, None, PartitionContent]:
    """Read the partition start to end; the last record per key wins (tombstones included).

    Yields after about `budget` records so the caller can let other work run. Keys are decoded
    only once, afterwards, so replay costs a dict store per record however long the history is.
    Transactional records count only once their COMMIT marker is read (an ABORT drops them), and
    then only where no more recent record of the same key came first, as Kafka's replay decides by
    record offset.
    """
    content = PartitionContent()
    plain = LatestValues()
    position = plog.log_start_offset
    end = plog.log_end_offset
    since_yield = 0
    while position < end:
        chunk = plog.read(position, READ_BYTES)
        at, size = 0, len(chunk)
        advanced = False
        while size - at >= HEADER_SIZE:  # as iter_batches, without a header object per batch
            base_offset, length, attributes, last_offset_delta, count = _FIELDS.unpack_from(chunk, at)
            batch_size = length + LOG_OVERHEAD
            if length < MIN_BATCH_LENGTH or at + batch_size > size:
                break
            if base_offset + last_offset_delta >= position:
                position = base_offset + last_offset_delta + 1
                advanced = True
                if attributes & _NOT_PLAIN or content.pending:
                    count = _take(parse_header(chunk, at), chunk[at : at + batch_size], content)
                else:
                    plain.take(chunk[at : at + batch_size], count, content.latest)
                since_yield += count
                if since_yield >= budget:
                    since_yield = 0
                    yield
            at += batch_size
        if not advanced:
            break
    return content


def _take(header: BatchHeader, batch: bytes, content: PartitionContent) -> int:
    """Apply one batch to the partition's content (transactions, markers, compressed batches)."""
    if header.is_control:
        _end_transaction(header, batch, content)
        return 0
    if header.is_transactional:
        _take_transactional(header, batch, content)
    elif content.pending:
        for record in batch_records(batch, header):
            if record.key is not None:
                _take_plain(content, record.key, record.value, record.offset)
    else:
        latest = content.latest
        for record in batch_records(batch, header):
            if record.key is not None:
                latest[record.key] = record.value
    return header.record_count


def _take_plain(content: PartitionContent, key: bytes, value: bytes | None, offset: int) -> None:
    """A record outside transactions while some are open: its offset is kept, and a tombstone also
    drops the key from every open transaction (as Kafka's replay of an offset tombstone)."""
    content.latest[key] = value
    content.written_at[key] = offset
    if value is None:
        for records in content.pending.values():
            records.pop(key, None)


def _take_transactional(header: BatchHeader, batch: bytes, content: PartitionContent) -> None:
    pid = header.producer_id
    records = content.pending.setdefault(pid, {})
    content.epochs[pid] = header.producer_epoch
    for record in batch_records(batch, header):
        if record.key is None:
            continue
        if record.value is None:
            _take_plain(content, record.key, None, record.offset)
        else:
            records[record.key] = (record.offset, record.value)


def _end_transaction(header: BatchHeader, batch: bytes, content: PartitionContent) -> None:
    records = content.pending.pop(header.producer_id, None)
    content.epochs.pop(header.producer_id, None)
    if records is not None and _is_commit(batch, header):
        latest, written_at = content.latest, content.written_at
        for key, (offset, value) in records.items():
            if offset > written_at.get(key, -1):
                latest[key] = value
                written_at[key] = offset
    if not content.pending:
        # Whatever is written from now on is more recent than every value kept: no order needed.
        content.written_at.clear()


def _is_commit(batch: bytes, header: BatchHeader) -> bool:
    for record in batch_records(batch, header):
        if record.key is not None and len(record.key) >= 4:
            return bool(_CONTROL_KEY.unpack_from(record.key)[1] == _COMMIT_MARKER)
    return False


def decode_records(
    content: PartitionContent | dict[bytes, bytes | None], budget: int
) -> Generator[None, None, DecodedPartition]:
    """Turn the partition's content into coordinator records to replay (timestamps as stored: epoch ms).

    Classic group records come first, then consumer-group records (in `REPLAY_ORDER`), then offsets;
    offsets whose order against open transactions matters and the open transactions' offsets come
    last, in log order, so replay orders them as Kafka does. Tombstones that survive compaction are
    dropped: each key appears once, so they delete nothing.
    """
    if isinstance(content, dict):
        content = PartitionContent(latest=content)
    latest, written_at = content.latest, content.written_at
    state = DecodedPartition(keys=len(latest))
    groups: list[CoordinatorRecord] = []
    offsets: list[CoordinatorRecord] = []
    commit = CommitDecoder().decode
    for i, (raw_key, raw_value) in enumerate(latest.items(), 1):
        if i % budget == 0:
            yield
        if raw_value is None or raw_key in written_at:
            continue
        record = commit(raw_key, raw_value) or _decode_logged(raw_key, raw_value, state)
        if isinstance(record, OffsetCommitRecord):
            offsets.append(record)
        elif record is not None:
            groups.append(record)
    ordered = _ordered(content, state)
    groups.extend(r for r in ordered if not isinstance(r, (OffsetCommitRecord, TxnOffsetCommitRecord)))
    state.records = _group_order(groups)
    head = len(state.records)
    state.records.extend(offsets)
    state.records.extend(r for r in ordered if isinstance(r, (OffsetCommitRecord, TxnOffsetCommitRecord)))
    # The group ids in the records' order; the offsets' (most records) read in one C loop.
    ids = dict.fromkeys(r.group_id for r in state.records[:head] if not isinstance(r, TransactionMarker))
    ids.update(dict.fromkeys(map(_GROUP_ID, offsets)))
    rest = state.records[head + len(offsets) :]
    ids.update(dict.fromkeys(r.group_id for r in rest if not isinstance(r, TransactionMarker)))
    state.group_ids = ids
    return state


def _group_order(records: list[CoordinatorRecord]) -> list[CoordinatorRecord]:
    """Classic group records first, then consumer, share and streams group records (`_replay_rank`, stable).

    Kafka 4.0's subscribed topic metadata (type 4) is decoded but not replayed: the group's metadata
    hash supersedes it, and a lingering one must not bring back a group deleted since."""
    classic: list[CoordinatorRecord] = [r for r in records if isinstance(r, GroupMetadataRecord)]
    consumer: list[CoordinatorRecord] = [
        r for r in records if not isinstance(r, (GroupMetadataRecord, ConsumerGroupPartitionMetadataRecord))
    ]
    consumer.sort(key=_replay_rank)
    return classic + consumer


_SHARE_FROM = len(REPLAY_ORDER)
_STREAMS_FROM = _SHARE_FROM + len(SHARE_REPLAY_ORDER)


def _replay_rank(record: CoordinatorRecord) -> int:
    """Consumer-group records in their order, then share-group records, then streams-group records."""
    t = type(record)
    if t in REPLAY_ORDER:
        return REPLAY_ORDER[t]
    if t in SHARE_REPLAY_ORDER:
        return _SHARE_FROM + SHARE_REPLAY_ORDER[t]
    return _STREAMS_FROM + STREAMS_REPLAY_ORDER.get(t, 0)


def _ordered(content: PartitionContent, state: DecodedPartition) -> list[CoordinatorRecord]:
    """The offsets written while transactions were open and those transactions' records, in log order."""
    latest = content.latest
    entries: list[tuple[int, int, int, bytes, bytes | None]] = [
        (offset, -1, -1, key, latest.get(key)) for key, offset in content.written_at.items()
    ]
    entries.extend(content.open_txns())
    entries.sort(key=lambda e: e[0])
    out: list[CoordinatorRecord] = []
    for _offset, pid, epoch, key, value in entries:
        if value is None:
            continue
        record = _decode_logged(key, value, state)
        if record is None:
            continue
        if pid >= 0 and isinstance(record, OffsetCommitRecord):
            out.append(TxnOffsetCommitRecord(record.group_id, record.partition, record.offset, pid, epoch))
        else:
            out.append(record)
    return out


def _decode_logged(raw_key: bytes, raw_value: bytes, state: DecodedPartition) -> CoordinatorRecord | None:
    try:
        record = _decode(raw_key, raw_value)
    except RecordFormatError as exc:
        state.skipped += 1
        log.warning("offsets.undecodable_record", key=raw_key.hex(), error=str(exc))
        return None
    if record is None:
        state.skipped += 1
    return record


def _decode(raw_key: bytes, raw_value: bytes) -> CoordinatorRecord | None:
    offset_key = decode_offset_key(raw_key)
    if offset_key is not None:
        group_id, topic, partition = offset_key
        v = decode_offset_value(raw_value)
        offset = OffsetAndMetadata(
            v.offset,
            v.metadata,
            v.leader_epoch,
            v.commit_timestamp,
            v.expire_timestamp,
        )
        return OffsetCommitRecord(group_id, TopicPartition(topic, partition), offset)
    if is_share_key(raw_key):
        return decode_share_record(raw_key, raw_value)
    if is_streams_key(raw_key):
        # Not in the CoordinatorRecord alias (records.py imports no group type's module).
        return cast("CoordinatorRecord", decode_streams_record(raw_key, raw_value))
    key = decode_key(raw_key)
    if isinstance(key, ConsumerGroupKey):
        return decode_consumer_record(key, raw_value)
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
        None if ts < 0 else ts,
    )
