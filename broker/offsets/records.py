"""Kafka's `__consumer_offsets` record formats: offset commit and group metadata keys and values.

Every key and value starts with an int16 version. Keys: v0/v1 offset commit (group, topic,
partition), v2 group metadata (group). Offset values v0-v4 and group values v0-v4 are read; the
writer uses what Kafka 3.x writes: offset value v3 (v1 when the commit has an explicit expiry) and
group value v3. v4 of both values is the flexible encoding. A tombstone is a null value.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafkito.protocol.primitives import WireFormatError, read_uvarint

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


class RecordFormatError(ValueError):
    """Bytes that are not a valid key or value of the version they announce."""


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


@dataclass(slots=True, frozen=True)
class OffsetValue:
    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int | None = None  # only offset value v1 carries one


@dataclass(slots=True, frozen=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None  # v3+
    client_id: str
    client_host: str
    rebalance_timeout: int  # v1+; a v0 record uses the session timeout
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(slots=True, frozen=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[MemberValue, ...] = ()
    current_state_timestamp: int = -1  # v2+; -1 = unknown


Key = OffsetKey | GroupKey | UnknownKey


# -- writing ------------------------------------------------------------------------------------


def _string(text: str) -> bytes:
    raw = text.encode()
    if len(raw) > 0x7FFF:
        raise RecordFormatError(f"string of {len(raw)} bytes does not fit an int16 length")
    return _I16.pack(len(raw)) + raw


def _nullable_string(text: str | None) -> bytes:
    return b"\xff\xff" if text is None else _string(text)


def _bytes(data: bytes) -> bytes:
    return _I32.pack(len(data)) + data


def encode_offset_key(group: str, topic: str, partition: int) -> bytes:
    return _I16.pack(OFFSET_KEY_VERSION) + _string(group) + _string(topic) + _I32.pack(partition)


def encode_group_key(group: str) -> bytes:
    return _I16.pack(GROUP_KEY_VERSION) + _string(group)


def encode_offset_value(value: OffsetValue) -> bytes:
    """v3, or v1 when the commit carries an explicit expiry (OffsetCommit v2-v4 retention time)."""
    if value.expire_timestamp is not None:
        return (
            _I16.pack(OFFSET_VALUE_VERSION_WITH_EXPIRY)
            + _I64.pack(value.offset)
            + _string(value.metadata)
            + _V1_TAIL.pack(value.commit_timestamp, value.expire_timestamp)
        )
    return (
        _I16.pack(OFFSET_VALUE_VERSION)
        + _I64.pack(value.offset)
        + _I32.pack(value.leader_epoch)
        + _string(value.metadata)
        + _TIMESTAMP.pack(value.commit_timestamp)
    )


def encode_group_value(value: GroupValue) -> bytes:
    """Group metadata value v3."""
    parts = [
        _I16.pack(GROUP_VALUE_VERSION),
        _string(value.protocol_type),
        _I32.pack(value.generation),
        _nullable_string(value.protocol),
        _nullable_string(value.leader),
        _I64.pack(value.current_state_timestamp),
        _I32.pack(len(value.members)),
    ]
    for m in value.members:
        parts += [
            _string(m.member_id),
            _nullable_string(m.group_instance_id),
            _string(m.client_id),
            _string(m.client_host),
            _I32.pack(m.rebalance_timeout),
            _I32.pack(m.session_timeout),
            _bytes(m.subscription),
            _bytes(m.assignment),
        ]
    return b"".join(parts)


# -- reading ------------------------------------------------------------------------------------


class _Reader:
    """A cursor over one key or value; `flexible` switches to compact lengths (v4 values)."""

    __slots__ = ("buf", "flexible", "pos")

    def __init__(self, buf: bytes, pos: int = 2, flexible: bool = False) -> None:
        self.buf = buf
        self.pos = pos
        self.flexible = flexible

    def _take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise RecordFormatError(f"need {n} bytes at {self.pos}, have {len(self.buf) - self.pos}")
        out = self.buf[self.pos : end]
        self.pos = end
        return out

    def i32(self) -> int:
        (v,) = _I32.unpack(self._take(4))
        return int(v)

    def i64(self) -> int:
        (v,) = _I64.unpack(self._take(8))
        return int(v)

    def uvarint(self) -> int:
        try:
            value, self.pos = read_uvarint(self.buf, self.pos)
        except WireFormatError as exc:
            raise RecordFormatError(str(exc)) from None
        return value

    def _length(self, wide: bool) -> int:
        if self.flexible:
            return self.uvarint() - 1
        if wide:
            return self.i32()
        (v,) = _I16.unpack(self._take(2))
        return int(v)

    def nullable_string(self) -> str | None:
        n = self._length(False)
        if n < 0:
            return None
        try:
            return self._take(n).decode()
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"invalid UTF-8 string: {exc}") from None

    def string(self) -> str:
        s = self.nullable_string()
        if s is None:
            raise RecordFormatError("null where a string is required")
        return s

    def bytes_(self) -> bytes:
        n = self._length(True)
        return b"" if n < 0 else self._take(n)

    def array_length(self) -> int:
        n = self._length(True)
        if n < 0 or n > len(self.buf):
            raise RecordFormatError(f"bad array length {n}")
        return n

    def tagged_fields(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self._take(self.uvarint())


def _version(buf: bytes) -> int:
    if len(buf) < 2:
        raise RecordFormatError("shorter than a version")
    (v,) = _I16.unpack_from(buf, 0)
    return int(v)


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
    version = _version(buf)
    if version in (0, 1):
        r = _Reader(buf)
        key: Key = OffsetKey(r.string(), r.string(), r.i32())
    elif version == 2:
        r = _Reader(buf)
        key = GroupKey(r.string())
    else:
        return UnknownKey(version)
    if r.pos != len(buf):
        raise RecordFormatError(f"{len(buf) - r.pos} trailing bytes after a v{version} key")
    return key


def decode_offset_value(buf: bytes) -> OffsetValue:
    version = _version(buf)
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
    r = _Reader(buf, flexible=version >= 4)
    offset = r.i64()
    epoch = r.i32() if version >= 3 else -1
    metadata = r.string()
    commit_ts = r.i64()
    expire = r.i64() if version == 1 else None
    r.tagged_fields()
    if r.pos != len(buf):
        raise RecordFormatError(f"{len(buf) - r.pos} trailing bytes after a v{version} offset value")
    return OffsetValue(offset, metadata, commit_ts, epoch, None if expire == -1 else expire)


def decode_group_value(buf: bytes) -> GroupValue:
    version = _version(buf)
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown group metadata value version {version}")
    r = _Reader(buf, flexible=version >= 4)
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
    if r.pos != len(buf):
        raise RecordFormatError(f"{len(buf) - r.pos} trailing bytes after a v{version} group value")
    return GroupValue(protocol_type, generation, protocol, leader, tuple(members), state_ts)
