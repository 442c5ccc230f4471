"""Metadata responses (v0-v13) encoded by hand, with each topic's partition list encoded once.

A one-node broker answers every partition of a topic alike (its node leads it, is its only replica
and its ISR), so a topic's partition list depends only on the partition count, the node and the
version: it is encoded once and kept (`PartitionLists`), and a Metadata of a topic of thousands of
partitions costs a dictionary lookup instead of building and encoding thousands of structs. What the
codec would encode is pinned by a test for every version (tests/topics_scale/test_metadata_encode.py).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from typing import NamedTuple

from kafkito.protocol.primitives import compact_string, uvarint

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
NOT_REQUESTED = -(2**31)  # authorized operations not asked for (Kafka's default)
_ZERO_UUID = bytes(16)
_FLEXIBLE = 9
_CACHED_LISTS = 256  # distinct (count, node, version) lists kept; past that the cache starts again


class Broker(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None


class TopicEntry(NamedTuple):
    """One topic of the answer; `partitions` is its encoded partition list (`PartitionLists.get`)."""

    error_code: int
    name: str | None
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: bytes
    authorized_operations: int = NOT_REQUESTED  # v8+: the int32 bit field


def _string(text: str | None, flexible: bool) -> bytes:
    if flexible:
        return compact_string(text)
    if text is None:
        return _I16.pack(-1)
    data = text.encode()
    return _I16.pack(len(data)) + data


def _array_length(n: int, flexible: bool) -> bytes:
    return uvarint(n + 1) if flexible else _I32.pack(n)


def _node_list(node: int, flexible: bool) -> bytes:
    return _array_length(1, flexible) + _I32.pack(node)


def encode_single_node_partitions(count: int, node: int, version: int) -> bytes:
    """The partition list of a topic of `count` partitions, each led by `node`, its only replica."""
    flexible = version >= _FLEXIBLE
    nodes = _node_list(node, flexible)
    head = _I16.pack(0)
    leader = _I32.pack(node) + (_I32.pack(0) if version >= 7 else b"")
    tail = (
        nodes + nodes + (_array_length(0, flexible) if version >= 5 else b"") + (b"\0" if flexible else b"")
    )
    parts = [_array_length(count, flexible)]
    parts += [head + _I32.pack(p) + leader + tail for p in range(count)]
    return b"".join(parts)


class PartitionLists:
    """Encoded single-node partition lists by (count, node, version), built when first asked for."""

    __slots__ = ("_lists",)

    def __init__(self) -> None:
        self._lists: dict[tuple[int, int, int], bytes] = {}

    def get(self, count: int, node: int, version: int) -> bytes:
        key = (count, node, version)
        found = self._lists.get(key)
        if found is None:
            if len(self._lists) >= _CACHED_LISTS:
                self._lists.clear()
            found = self._lists[key] = encode_single_node_partitions(count, node, version)
        return found


def empty_partitions(version: int) -> bytes:
    return _array_length(0, version >= _FLEXIBLE)


def _topic(version: int, flexible: bool, t: TopicEntry) -> bytes:
    out = [_I16.pack(t.error_code), _string(t.name, flexible)]
    if version >= 10:
        out.append(t.topic_id.bytes if t.topic_id is not None else _ZERO_UUID)
    if version >= 1:
        out.append(b"\1" if t.is_internal else b"\0")
    out.append(t.partitions)
    if version >= 8:
        out.append(_I32.pack(t.authorized_operations))
    if flexible:
        out.append(b"\0")
    return b"".join(out)


def encode_metadata(
    version: int,
    brokers: Sequence[Broker],
    cluster_id: str | None,
    controller_id: int,
    topics: Sequence[TopicEntry],
    cluster_operations: int = NOT_REQUESTED,
) -> bytes:
    """The response body (no header) as Kafka's schema lays it out at `version` (`cluster_operations`:
    the cluster's authorized operations of v8-v10)."""
    flexible = version >= _FLEXIBLE
    tags = b"\0" if flexible else b""
    out = [_I32.pack(0)] if version >= 3 else []  # throttle_time_ms
    out.append(_array_length(len(brokers), flexible))
    for b in brokers:
        out.append(_I32.pack(b.node_id) + _string(b.host, flexible) + _I32.pack(b.port))
        if version >= 1:
            out.append(_string(b.rack, flexible))
        out.append(tags)
    if version >= 2:
        out.append(_string(cluster_id, flexible))
    if version >= 1:
        out.append(_I32.pack(controller_id))
    out.append(_array_length(len(topics), flexible))
    out += (_topic(version, flexible, t) for t in topics)
    if 8 <= version <= 10:
        out.append(_I32.pack(cluster_operations))
    if version >= 13:
        out.append(_I16.pack(0))  # error_code: NONE (KIP-1102's REBOOTSTRAP_REQUIRED is never needed)
    out.append(tags)
    return b"".join(out)
