"""OffsetCommit (8): validate against the group, then answer once the records are in `__consumer_offsets`.

v0 stored offsets in ZooKeeper: Kafka 3.9 without ZooKeeper answers it UNSUPPORTED_VERSION, and so do we;
v1 generation and member id, a commit timestamp per partition (-1: the broker's time);
v2 retention_time_ms (an explicit expiry, v2-v4 only); v3 throttle time; v4 no change; v5 drops
retention_time_ms; v6 committed_leader_epoch; v7 group_instance_id (KIP-345); v8 flexible;
v9 new-protocol member epochs (no change for classic groups); v10 topic ids instead of names
(KIP-848 follow-up): an id no topic has is UNKNOWN_TOPIC_ID for each of its partitions, as Kafka
answers, and the answer names topics by id. A topic named twice is one entry of the answer, as Kafka's.
"""

from __future__ import annotations

import asyncio
import struct
import uuid
from collections.abc import Awaitable, Iterator, Sequence
from typing import Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import OffsetAndMetadata, OffsetCommitRequest, TopicPartition
from kafkito.broker.handlers.parked import Parked
from kafkito.protocol.errors import ErrorCode
from kafkito.protocol.primitives import compact_string, uvarint

API_KEY = 8
VERSIONS = (0, 10)
TOPIC_IDS_SINCE = 10

DEFAULT_RETENTION_TIME = -1
CHUNK = 5_000  # partitions handled between yields to the loop, for requests larger than that

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_PARTITION = struct.Struct(">ih")  # partition_index, error_code
_PARTITION_FLEXIBLE = struct.Struct(">ihB")  # ... and an empty tagged-field section


class OffsetCommitPartition(Protocol):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int  # v6+
    committed_metadata: str | None
    commit_timestamp: int  # v1 only


class OffsetCommitTopic(Protocol):
    name: str  # up to v9
    topic_id: uuid.UUID  # v10+
    partitions: Sequence[OffsetCommitPartition]


class OffsetCommitRequestBody(Protocol):
    """The fields of kafka-python's OffsetCommitRequest this handler reads."""

    group_id: str | None
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None  # v7+
    retention_time_ms: int  # v2-v4
    topics: Sequence[OffsetCommitTopic]


def handle(ctx: RequestContext, request: OffsetCommitRequestBody) -> bytes | Awaitable[bytes]:
    commit = _Commit(ctx, request)
    if ctx.version == 0:
        return commit.refuse_v0()
    if sum(len(t.partitions) for t in request.topics) <= CHUNK:
        for _ in commit.read():
            pass
        return commit.write()
    return commit.in_chunks()


class _Commit:
    """One OffsetCommit: the partitions read, those refused at once, and the response encoded by hand
    (kafka-python's response objects cost seconds for 100,000 partitions). Reading and encoding pause
    every CHUNK partitions, so that a huge request can let other connections run in between."""

    __slots__ = ("ctx", "expire", "now", "offsets", "order", "rejected", "request", "version")

    def __init__(self, ctx: RequestContext, request: OffsetCommitRequestBody) -> None:
        self.ctx = ctx
        self.request = request
        self.version = ctx.version
        self.now = ctx.groups.clock.now_ms()
        retention = request.retention_time_ms if 2 <= self.version <= 4 else DEFAULT_RETENTION_TIME
        self.expire = None if retention == DEFAULT_RETENTION_TIME else self.now + retention
        # (the topic's name, or its `_unknown_id` key; the id of a v10 topic; its partitions)
        self.order: list[tuple[str, uuid.UUID | None, list[int]]] = []
        self.rejected: dict[TopicPartition, ErrorCode] = {}
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}

    def read(self) -> Iterator[None]:
        """Take in the request's partitions; pauses (yields) every CHUNK of them."""
        version, now, expire = self.version, self.now, self.expire
        own_timestamps = version == 1
        offsets, rejected = self.offsets, self.rejected
        topics = self.ctx.topics
        count = 0
        unreadable = self._unreadable() if self.ctx.authorizer is not None else ()
        by_id = version >= TOPIC_IDS_SINCE
        slots: dict[str, int] = {}  # a topic's place in `order`
        for topic in self.request.topics:
            if by_id:
                info = topics.get_by_id(topic.topic_id)
                name = info.name if info is not None else _unknown_id(topic.topic_id)
            else:
                name = topic.name
                info = topics.get(name)
            indexes: list[int] = []
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                indexes.append(p.partition_index)
                if by_id and info is None:
                    rejected[tp] = ErrorCode.UNKNOWN_TOPIC_ID
                elif name in unreadable:
                    rejected[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                elif info is None or not 0 <= p.partition_index < info.partitions:
                    rejected[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    offsets[tp] = OffsetAndMetadata(
                        p.committed_offset,
                        p.committed_metadata or "",  # null metadata is stored as ""
                        p.committed_leader_epoch if version >= 6 else -1,
                        p.commit_timestamp if own_timestamps and p.commit_timestamp != -1 else now,
                        expire,
                    )
                count += 1
                if count % CHUNK == 0:
                    yield
            listed = slots.get(name)
            if listed is None:
                slots[name] = len(self.order)
                self.order.append((name, topic.topic_id if by_id else None, indexes))
            else:  # a topic named twice is one entry of the answer, as Kafka's
                self.order[listed][2].extend(indexes)

    def _unreadable(self) -> set[str]:
        """The topics the principal may not READ (the group's READ is checked before the handler)."""
        from kafkito.broker.security.acls import AclOperation, ResourceType
        from kafkito.broker.security.authorizer import denied

        if self.version >= TOPIC_IDS_SINCE:
            infos = (self.ctx.topics.get_by_id(t.topic_id) for t in self.request.topics)
            names = {info.name for info in infos if info is not None}
        else:
            names = {t.name for t in self.request.topics}
        return denied(self.ctx, AclOperation.READ, ResourceType.TOPIC, names)

    def refuse_v0(self) -> bytes:
        """Kafka 3.9 in KRaft mode: every partition UNSUPPORTED_VERSION (v0 wrote to ZooKeeper), unless
        none of them exists (then each is UNKNOWN_TOPIC_OR_PARTITION)."""
        for _ in self.read():
            pass
        if self.offsets:
            self.rejected = dict.fromkeys([*self.rejected, *self.offsets], ErrorCode.UNSUPPORTED_VERSION)
        return self.encode({})

    def write(self) -> bytes | Awaitable[bytes]:
        """Hand the valid offsets to the coordinator; the response once they are written."""
        if not self.offsets:
            return self.encode({})
        parked: Parked[dict[TopicPartition, ErrorCode]] = Parked(self.encode)
        self.ctx.groups.commit_offsets(self._coordinator_request(), parked.callback)
        response: bytes | Awaitable[bytes] = parked.response()
        return response

    def _coordinator_request(self) -> OffsetCommitRequest:
        request = self.request
        return OffsetCommitRequest(
            request.group_id,
            request.member_id,
            request.group_instance_id if self.version >= 7 else None,
            request.generation_id_or_member_epoch,
            self.offsets,
            self.version,
        )

    async def in_chunks(self) -> bytes:
        """The same as `read` + `write` + `encode`, yielding to the loop between chunks."""
        for _ in self.read():
            await asyncio.sleep(0)
        errors: dict[TopicPartition, ErrorCode] = {}
        if self.offsets:
            parked: Parked[dict[TopicPartition, ErrorCode]] = Parked(lambda e: e)
            self.ctx.groups.commit_offsets(self._coordinator_request(), parked.callback)
            answer = parked.response()
            errors = await answer if isinstance(answer, Awaitable) else answer
        pieces: list[bytes] = []
        for _ in self._encode(errors, pieces):
            await asyncio.sleep(0)
        return b"".join(pieces)

    def encode(self, errors: dict[TopicPartition, ErrorCode]) -> bytes:
        pieces: list[bytes] = []
        for _ in self._encode(errors, pieces):
            pass
        return b"".join(pieces)

    def _encode(self, errors: dict[TopicPartition, ErrorCode], out: list[bytes]) -> Iterator[None]:
        """The response body (throttle time v3+, topics, by id from v10; flexible from v8) into `out`;
        pauses every CHUNK."""
        merged = {**errors, **self.rejected}
        flexible = self.version >= 8
        if self.version >= 3:
            out.append(_INT32.pack(0))
        out.append(uvarint(len(self.order) + 1) if flexible else _INT32.pack(len(self.order)))
        count = 0
        by_id = self.version >= TOPIC_IDS_SINCE
        for name, topic_id, indexes in self.order:
            if by_id:
                out.append((topic_id or _ZERO_UUID).bytes)
            else:
                out.append(compact_string(name) if flexible else _string(name))
            out.append(uvarint(len(indexes) + 1) if flexible else _INT32.pack(len(indexes)))
            for i in indexes:
                error = merged[TopicPartition(name, i)]
                out.append(_PARTITION_FLEXIBLE.pack(i, error, 0) if flexible else _PARTITION.pack(i, error))
                count += 1
                if count % CHUNK == 0:
                    yield
            if flexible:
                out.append(b"\x00")  # the topic's tagged fields
        if flexible:
            out.append(b"\x00")  # the response's tagged fields


_ZERO_UUID = uuid.UUID(int=0)


def _unknown_id(topic_id: uuid.UUID | None) -> str:
    """The key a v10 topic of an unknown id is kept under: no topic name has a space or a colon."""
    return f"unknown id: {topic_id}"


def _string(text: str) -> bytes:
    raw = text.encode()
    return _INT16.pack(len(raw)) + raw
