"""The offset commit records of a reload, decoded fast: the common key and value forms only.

A reload decodes one record per live key, most of them offset commits (key v0/v1, value v3 as
Kafka 3.x and kafkito write it). This reads exactly those forms in a few `struct` calls and shares
the group id and `TopicPartition` objects between the keys that repeat them; anything else
(another version, a malformed record) returns None, and the general decoder in `records` reads it
and reports its errors.
"""

from __future__ import annotations

import struct

from kafkito.broker.coordinator.records import OffsetCommitRecord
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_V3_HEAD = struct.Struct(">hqih")  # version, offset, leader epoch, metadata length
_V3_NO_METADATA = struct.Struct(">hqihq")  # ... metadata length 0, commit timestamp
_TIMESTAMP = struct.Struct(">q")
_MAX_CACHED_PARTITIONS = 100_000
# The records' NamedTuples built without their keyword-handling __new__: a third of the cost.
_new = tuple.__new__


class CommitDecoder:
    """Decodes offset commit records of one load (timestamps as stored: epoch milliseconds)."""

    __slots__ = ("_group", "_group_prefix", "_partitions")

    def __init__(self) -> None:
        self._group_prefix = b"\xff"  # key bytes up to the end of the last group id (no key starts so)
        self._group = ""
        self._partitions: dict[bytes, TopicPartition] = {}  # key tail (topic, partition) -> its object

    def decode(self, key: bytes, value: bytes) -> OffsetCommitRecord | None:
        """The record, or None if `key` or `value` is not in the common form."""
        if len(key) < 10 or key[0] != 0 or key[1] > 1:
            return None
        if key.startswith(self._group_prefix):
            group_end = len(self._group_prefix)
            group = self._group
        else:
            (n,) = _I16.unpack_from(key, 2)
            group_end = 4 + n
            if n < 0 or group_end + 6 > len(key):
                return None
            try:
                group = key[4:group_end].decode()
            except UnicodeDecodeError:
                return None
            self._group_prefix, self._group = key[:group_end], group
        tp = self._partitions.get(key[group_end:])
        if tp is None:
            tp = self._partition(key, group_end)
            if tp is None:
                return None
        offset = self._offset(value)
        return None if offset is None else _new(OffsetCommitRecord, (group, tp, offset))

    def _partition(self, key: bytes, group_end: int) -> TopicPartition | None:
        if group_end + 6 > len(key):
            return None
        (m,) = _I16.unpack_from(key, group_end)
        topic_end = group_end + 2 + m
        if m < 0 or topic_end + 4 != len(key):
            return None
        try:
            topic = key[group_end + 2 : topic_end].decode()
        except UnicodeDecodeError:
            return None
        (partition,) = _I32.unpack_from(key, topic_end)
        tp = TopicPartition(topic, partition)
        if len(self._partitions) >= _MAX_CACHED_PARTITIONS:
            self._partitions.clear()
        self._partitions[key[group_end:]] = tp
        return tp

    def _offset(self, value: bytes) -> OffsetAndMetadata | None:
        """A v3 offset value (no expiry: that is v1's), as the general decoder reads it."""
        size = len(value)
        if size == _V3_NO_METADATA.size:
            version, offset, epoch, n, ts = _V3_NO_METADATA.unpack(value)
            if version != 3 or n != 0:
                return None
            return _new(OffsetAndMetadata, (offset, "", epoch, ts, None))
        if size < _V3_HEAD.size:
            return None
        version, offset, epoch, n = _V3_HEAD.unpack_from(value)
        start = _V3_HEAD.size
        if version != 3 or n < 0 or start + n + 8 != size:
            return None
        try:
            metadata = value[start : start + n].decode()
        except UnicodeDecodeError:
            return None
        (ts,) = _TIMESTAMP.unpack_from(value, start + n)
        return _new(OffsetAndMetadata, (offset, metadata, epoch, ts, None))
