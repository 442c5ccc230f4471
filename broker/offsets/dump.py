"""`kafkito offsets dump`: decode `__consumer_offsets` straight from the segment files, read-only."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kafkito.broker.coordinator.classic.subscription import subscribed_topics
from kafkito.broker.log.batch import HEADER_SIZE, parse_header
from kafkito.broker.log.metadata_log import read_topics
from kafkito.broker.offsets.batches import batch_records
from kafkito.broker.offsets.consumer_dump import TopicNames, describe_key, describe_value
from kafkito.broker.offsets.consumer_records import ConsumerGroupKey, decode_consumer_value
from kafkito.broker.offsets.log_sink import OFFSETS_TOPIC
from kafkito.broker.offsets.partitioner import partition_for
from kafkito.broker.offsets.records import (
    GroupKey,
    GroupValue,
    Key,
    OffsetKey,
    RecordFormatError,
    decode_group_value,
    decode_key,
    decode_offset_value,
)
from kafkito.broker.offsets.share_records import RECORD_TYPE_NAMES as SHARE_RECORD_TYPE_NAMES
from kafkito.broker.offsets.share_records import (
    decode_share_key,
    decode_share_record,
    describe_share_record,
    is_share_key,
)
from kafkito.broker.offsets.streams_records import RECORD_TYPE_NAMES as STREAMS_RECORD_TYPE_NAMES
from kafkito.broker.offsets.streams_records import (
    decode_streams_key,
    decode_streams_record,
    describe_streams_record,
    is_streams_key,
)

_PARTITION_DIR = re.compile(rf"^{OFFSETS_TOPIC}-(\d+)$")
_READ = 1 << 20


def _partitions(data_dir: Path) -> dict[int, Path]:
    found: dict[int, Path] = {}
    if data_dir.is_dir():
        for child in data_dir.iterdir():
            m = _PARTITION_DIR.match(child.name)
            if m and child.is_dir():
                found[int(m.group(1))] = child
    return found


def _partition_count(data_dir: Path, found: dict[int, Path]) -> int:
    try:
        return read_topics(data_dir)[OFFSETS_TOPIC].partitions
    except (OSError, ValueError, KeyError, TypeError):
        return max(found, default=-1) + 1


def _topic_names(data_dir: Path) -> dict[uuid.UUID, str]:
    """Topic id to name, as the data directory's metadata log records them (empty if unreadable)."""
    try:
        return {info.topic_id: name for name, info in read_topics(data_dir).items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _batches(segment: Path) -> Iterator[tuple[Any, bytes]]:
    """Complete batches of a segment file; a torn tail (a broker writing, or crashed) is left out."""
    with open(segment, "rb") as f:
        pending = b""
        while True:
            chunk = f.read(_READ)
            if not chunk:
                return
            pending += chunk
            pos = 0
            while len(pending) - pos >= HEADER_SIZE:
                header = parse_header(pending, pos)
                if header.size < HEADER_SIZE or pos + header.size > len(pending):
                    break
                yield header, pending[pos : pos + header.size]
                pos += header.size
            pending = pending[pos:]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def describe(
    raw_key: bytes, raw_value: bytes | None, topic_names: TopicNames | None = None
) -> tuple[str | None, dict[str, Any]]:
    """(group, JSON-ready description) of one record; group is None for keys of unknown versions.
    `topic_names` (topic id to name) names the topics of consumer-group assignments."""
    if is_share_key(raw_key):
        return _describe_share(raw_key, raw_value, topic_names or {})
    if is_streams_key(raw_key):
        return _describe_streams(raw_key, raw_value)
    try:
        key = decode_key(raw_key)
    except RecordFormatError as exc:
        return None, {"key": {"error": str(exc), "hex": raw_key.hex()}}
    group, out = _describe_key(key)
    if raw_value is None:
        out["value"] = None
        return group, out
    try:
        out["value"] = _describe_value(key, raw_value, topic_names or {})
    except RecordFormatError as exc:
        out["value"] = {"error": str(exc), "hex": raw_value.hex()}
    return group, out


def _describe_share(
    raw_key: bytes, raw_value: bytes | None, topic_names: TopicNames
) -> tuple[str | None, dict[str, Any]]:
    """A share-group record (types 9-15): its key fields, and its value's fields (None: tombstone)."""
    try:
        record_type, group, member = decode_share_key(raw_key)
        record = decode_share_record(raw_key, raw_value)
    except RecordFormatError as exc:
        return None, {"key": {"error": str(exc), "hex": raw_key.hex()}}
    key: dict[str, Any] = {"type": SHARE_RECORD_TYPE_NAMES[record_type], "group": group}
    if member is not None:
        key["member_id"] = member
    value = None if raw_value is None else describe_share_record(record, dict(topic_names))
    return group, {"key": key, "value": value}


def _describe_streams(raw_key: bytes, raw_value: bytes | None) -> tuple[str | None, dict[str, Any]]:
    """A streams-group record (types 17, 19-23): its key fields, and its value's fields (None: tombstone)."""
    try:
        record_type, group, member = decode_streams_key(raw_key)
        record = decode_streams_record(raw_key, raw_value)
    except RecordFormatError as exc:
        return None, {"key": {"error": str(exc), "hex": raw_key.hex()}}
    key: dict[str, Any] = {"type": STREAMS_RECORD_TYPE_NAMES[record_type], "group": group}
    if member is not None:
        key["member_id"] = member
    value = None if raw_value is None else describe_streams_record(record)
    return group, {"key": key, "value": value}


def _describe_key(key: Key) -> tuple[str | None, dict[str, Any]]:
    if isinstance(key, OffsetKey):
        return key.group, {
            "key": {"type": "offset", "group": key.group, "topic": key.topic, "partition": key.partition}
        }
    if isinstance(key, GroupKey):
        return key.group, {"key": {"type": "group", "group": key.group}}
    if isinstance(key, ConsumerGroupKey):
        return key.group, {"key": describe_key(key)}
    return None, {"key": {"type": "unknown", "version": key.version}}


def _describe_value(key: Key, raw_value: bytes, topic_names: TopicNames) -> dict[str, Any]:
    if isinstance(key, OffsetKey):
        v = decode_offset_value(raw_value)
        return {
            "offset": v.offset,
            "leader_epoch": v.leader_epoch,
            "metadata": v.metadata,
            "commit_timestamp": v.commit_timestamp,
            "expire_timestamp": v.expire_timestamp,
        }
    if isinstance(key, GroupKey):
        return _group_value(decode_group_value(raw_value))
    if isinstance(key, ConsumerGroupKey):
        return describe_value(decode_consumer_value(key.record_type, raw_value), topic_names)
    return {"hex": raw_value.hex()}


def _group_value(g: GroupValue) -> dict[str, Any]:
    return {
        "protocol_type": g.protocol_type,
        "generation": g.generation,
        "protocol": g.protocol,
        "leader": g.leader,
        "current_state_timestamp": g.current_state_timestamp,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rebalance_timeout": m.rebalance_timeout,
                "session_timeout": m.session_timeout,
                "subscribed_topics": _topics(g.protocol_type, m.subscription),
                "subscription": _b64(m.subscription),
                "assignment": _b64(m.assignment),
            }
            for m in g.members
        ],
    }


def _topics(protocol_type: str, subscription: bytes) -> list[str] | None:
    if protocol_type != "consumer":
        return None
    topics = subscribed_topics(subscription)
    return None if topics is None else sorted(topics)


def dump(data_dir: Path, out: IO[str], group: str | None = None) -> int:
    """Write one JSON line per record (oldest first, partition by partition); returns how many."""
    written = 0
    for line in records(data_dir, group):
        out.write(json.dumps(line) + "\n")
        written += 1
    return written


def records(data_dir: Path, group: str | None = None) -> Iterator[dict[str, Any]]:
    """Every record described as `dump` writes it (oldest first, partition by partition)."""
    found = _partitions(data_dir)
    wanted = sorted(found)
    if group is not None:
        wanted = [p for p in wanted if p == partition_for(group, _partition_count(data_dir, found))]
    names = _topic_names(data_dir)
    for partition in wanted:
        segments = sorted(
            (p for p in found[partition].glob("*.log") if p.stem.isdigit()), key=lambda p: int(p.stem)
        )
        for segment in segments:
            for header, batch in _batches(segment):
                yield from _lines(partition, header, batch, group, names)


def _lines(
    partition: int, header: Any, batch: bytes, group: str | None, names: TopicNames
) -> Iterator[dict[str, Any]]:
    """One batch's lines: its records, with the producer id of a transaction's; a marker's result."""
    for record in batch_records(batch, header):
        if record.key is None:
            continue
        line: dict[str, Any] = {
            "partition": partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
        }
        if header.is_control:
            line.update(_marker(header.producer_id, record.key, record.value))
            yield line
            continue
        record_group, described = describe(record.key, record.value, names)
        if group is not None and record_group != group:
            continue
        if header.is_transactional:
            line["producer_id"] = header.producer_id
        line.update(described)
        yield line


def _marker(producer_id: int, key: bytes, value: bytes | None) -> dict[str, Any]:
    """A control record: key int16 version, int16 type (0 ABORT, 1 COMMIT); value int16 version,
    int32 coordinator epoch."""
    kind = int.from_bytes(key[2:4], "big") if len(key) >= 4 else -1
    epoch = int.from_bytes(value[2:6], "big", signed=True) if value is not None and len(value) >= 6 else None
    return {
        "key": {"type": "txn_marker", "result": {0: "ABORT", 1: "COMMIT"}.get(kind, "UNKNOWN")},
        "value": {"producer_id": producer_id, "coordinator_epoch": epoch},
    }
