"""Kafka's `__consumer_offsets` record formats: offset commit and group metadata keys and values.

Every key and value starts with an int16 version. Keys: v0/v1 offset commit (group, topic,
partition), v2 group metadata (group); the consumer-group keys (3-8, 16) are decoded by
`consumer_records`, and other versions are `UnknownKey`. Offset values v0-v4 and group values
v0-v4 are read; the writer uses what Kafka 3.x writes: offset value v3 (v1 when the commit has an
explicit expiry) and group value v3. v4 of both values is the flexible encoding. A tombstone is a
null value. The primitives are in `encoding`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from kafkito.broker.offsets.encoding import (
    Reader,
    RecordFormatError,
    bytes_field,
    nullable_string,
    string,
    version_of,
)

if TYPE_CHECKING:  # the KIP-848 formats: imported by the first such key (~1.5 ms a start)
    from kafkito.broker.offsets.consumer_records import ConsumerGroupKey

__all__ = ["RecordFormatError"]

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 3
OFFSET_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_VALUE_VERSION = 3

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_OFFSET_V3_HEAD = struct.Struct(">hqih")  # version, offset, leader epoch, metadata length
_TIMESTAMP = struct.Struct(">q")
_V1_TAIL = struct.Struct(">qq")

# Values are NamedTuples (the broker imports this module at every start: ~50 µs a class, against
# ~330 µs for a frozen dataclass); keys stay dataclasses, so that keys of different types never
# compare equal.


@dataclass(slots=True, frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(slots=True, frozen=True)
class GroupKey:
    group: str


@dataclass(slots=True, frozen=True)
class UnknownKey:
    """A key of a version this broker does not know (newer records); replay skips it, as Kafka does."""

    version: int


class OffsetValue(NamedTuple):
    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int | None = None  # only offset value v1 carries one


class MemberValue(NamedTuple):
    member_id: str
    group_instance_id: str | None  # v3+
    client_id: str
    client_host: str
    rebalance_timeout: int  # v1+; a v0 record uses the session timeout
    session_timeout: int
    subscription: bytes
    assignment: bytes


class GroupValue(NamedTuple):
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[MemberValue, ...] = ()
    current_state_timestamp: int = -1  # v2+; -1 = unknown


Key: TypeAlias = "OffsetKey | GroupKey | ConsumerGroupKey | UnknownKey"  # annotations only


# -- writing ------------------------------------------------------------------------------------


def encode_offset_key(group: str, topic: str, partition: int) -> bytes:
    return _I16.pack(OFFSET_KEY_VERSION) + string(group) + string(topic) + _I32.pack(partition)


def encode_group_key(group: str) -> bytes:
    return _I16.pack(GROUP_KEY_VERSION) + string(group)


def encode_offset_value(value: OffsetValue) -> bytes:
    """v3, or v1 when the commit carries an explicit expiry (OffsetCommit v2-v4 retention time)."""
    if value.expire_timestamp is not None:
        return (
            _I16.pack(OFFSET_VALUE_VERSION_WITH_EXPIRY)
            + _I64.pack(value.offset)
            + string(value.metadata)
            + _V1_TAIL.pack(value.commit_timestamp, value.expire_timestamp)
        )
    return (
        _I16.pack(OFFSET_VALUE_VERSION)
        + _I64.pack(value.offset)
        + _I32.pack(value.leader_epoch)
        + string(value.metadata)
        + _TIMESTAMP.pack(value.commit_timestamp)
    )


def encode_group_value(value: GroupValue) -> bytes:
    """Group metadata value v3."""
    parts = [
        _I16.pack(GROUP_VALUE_VERSION),
        string(value.protocol_type),
        _I32.pack(value.generation),
        nullable_string(value.protocol),
        nullable_string(value.leader),
        _I64.pack(value.current_state_timestamp),
        _I32.pack(len(value.members)),
    ]
    for m in value.members:
        parts += [
            string(m.member_id),
            nullable_string(m.group_instance_id),
            string(m.client_id),
            string(m.client_host),
            _I32.pack(m.rebalance_timeout),
            _I32.pack(m.session_timeout),
            bytes_field(m.subscription),
            bytes_field(m.assignment),
        ]
    return b"".join(parts)


# -- reading ------------------------------------------------------------------------------------


def decode_offset_key(buf: bytes) -> tuple[str, str, int] | None:
    """(group, topic, partition) of a v0/v1 offset commit key, None for any other key; the replay path."""
    if len(buf) < 10 or buf[0] != 0 or buf[1] > 1:
        return None
    try:
        (n,) = _I16.unpack_from(buf, 2)
        group_end = 4 + n
        (m,) = _I16.unpack_from(buf, group_end)
        topic_end = group_end + 2 + m
        (partition,) = _I32.unpack_from(buf, topic_end)
        if n < 0 or m < 0 or topic_end + 4 != len(buf):
            raise RecordFormatError(f"malformed offset commit key of {len(buf)} bytes")
        return buf[4:group_end].decode(), buf[group_end + 2 : topic_end].decode(), int(partition)
    except (struct.error, UnicodeDecodeError) as exc:
        raise RecordFormatError(f"malformed offset commit key: {exc}") from None


def decode_key(buf: bytes) -> Key:
    version = version_of(buf)
    if version in (0, 1):
        r = Reader(buf)
        key: Key = OffsetKey(r.string(), r.string(), r.i32())
    elif version == 2:
        r = Reader(buf)
        key = GroupKey(r.string())
    else:
        from kafkito.broker.offsets.consumer_records import CONSUMER_KEY_TYPES, decode_consumer_key

        return decode_consumer_key(buf) if version in CONSUMER_KEY_TYPES else UnknownKey(version)
    r.end(f"a v{version} key")
    return key


def decode_offset_value(buf: bytes) -> OffsetValue:
    version = version_of(buf)
    if version == 3 and len(buf) >= _OFFSET_V3_HEAD.size:
        # The common case, unpacked in one go: replay reads millions of these.
        _, offset, epoch, n = _OFFSET_V3_HEAD.unpack_from(buf, 0)
        start = _OFFSET_V3_HEAD.size
        if n >= 0 and start + n + 8 == len(buf):
            try:
                metadata = buf[start : start + n].decode()
            except UnicodeDecodeError as exc:
                raise RecordFormatError(f"invalid UTF-8 metadata: {exc}") from None
            (ts,) = _TIMESTAMP.unpack_from(buf, start + n)
            return OffsetValue(offset, metadata, ts, epoch)
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown offset commit value version {version}")
    r = Reader(buf, flexible=version >= 4)
    offset = r.i64()
    epoch = r.i32() if version >= 3 else -1
    metadata = r.string()
    commit_ts = r.i64()
    expire = r.i64() if version == 1 else None
    r.tagged_fields()
    r.end(f"a v{version} offset value")
    return OffsetValue(offset, metadata, commit_ts, epoch, None if expire == -1 else expire)


def decode_group_value(buf: bytes) -> GroupValue:
    version = version_of(buf)
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown group metadata value version {version}")
    r = Reader(buf, flexible=version >= 4)
    protocol_type = r.string()
    generation = r.i32()
    protocol = r.nullable_string()
    leader = r.nullable_string()
    state_ts = r.i64() if version >= 2 else -1
    members = []
    for _ in range(r.array_length()):
        member_id = r.string()
        instance_id = r.nullable_string() if version >= 3 else None
        client_id = r.string()
        client_host = r.string()
        rebalance_timeout = r.i32() if version >= 1 else None
        session_timeout = r.i32()
        subscription = r.bytes_()
        assignment = r.bytes_()
        r.tagged_fields()
        members.append(
            MemberValue(
                member_id,
                instance_id,
                client_id,
                client_host,
                session_timeout if rebalance_timeout is None else rebalance_timeout,
                session_timeout,
                subscription,
                assignment,
            )
        )
    r.tagged_fields()
    r.end(f"a v{version} group value")
    return GroupValue(protocol_type, generation, protocol, leader, tuple(members), state_ts)
