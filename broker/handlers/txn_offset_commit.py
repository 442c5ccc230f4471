"""TxnOffsetCommit (28): a transactional producer commits a group's offsets inside its transaction.

The offsets are written in the producer's transactional batch to the group's `__consumer_offsets`
partition and stay pending until the transaction's marker (`GroupCoordinator.complete_transaction`).
v1 no change; v2 committed_leader_epoch; v3 flexible, member_id, generation_id and
group_instance_id (checked against the group when given); v4 TRANSACTION_ABORTABLE may be answered
(KIP-890). Up to v4, as Kafka verifies, the group's partition must already be in the producer's
ongoing transaction (AddOffsetsToTxn): otherwise INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4).
v5 is a transactions V2 client (KIP-890 part 2): the broker adds the group's partition to the
transaction itself, so no AddOffsetsToTxn comes first; the commit waits for that write. Unknown
topics or partitions get UNKNOWN_TOPIC_OR_PARTITION. v6 names topics by id (KIP-1319): an id no topic
has is UNKNOWN_TOPIC_ID for each of its partitions, and the answer names topics by id. The request's
generation field is Kafka's GenerationIdOrMemberEpoch (v3+: a classic group's generation or a consumer
group member's epoch); the codec reads Kafka 4.4's schema (`protocol/group_offsets.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition, TxnOffsetCommitRequest
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import AddPartitionsRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 28
VERSIONS = (0, 6)
IMPLICIT_ADD_SINCE = 5
TOPIC_IDS_SINCE = 6

NO_GENERATION = -1
# (the topic's name, or its `_unknown_id` key; its id from v6; its partitions), in request order
_Order = list[tuple[str, uuid.UUID | None, list[int]]]
OFFSETS_TOPIC = "__consumer_offsets"
ABORTABLE_SINCE = 4
# The transaction coordinator cannot tell yet: the client looks the coordinator up again and retries.
_RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)


class TxnOffsetCommitPartition(Protocol):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int  # v2+
    committed_metadata: str | None


class TxnOffsetCommitTopic(Protocol):
    name: str  # up to v5
    topic_id: uuid.UUID  # v6+
    partitions: Sequence[TxnOffsetCommitPartition]


class TxnOffsetCommitRequestBody(Protocol):
    """The fields of kafka-python's TxnOffsetCommitRequest this handler reads."""

    transactional_id: str
    group_id: str | None
    producer_id: int
    producer_epoch: int
    generation_id_or_member_epoch: int  # v3+
    member_id: str  # v3+
    group_instance_id: str | None  # v3+
    topics: Sequence[TxnOffsetCommitTopic]


def handle(ctx: RequestContext, request: TxnOffsetCommitRequestBody) -> Any:
    version = ctx.version
    order, rejected, offsets = _read_topics(ctx, request)

    def build(errors: dict[TopicPartition, ErrorCode]) -> Any:
        answers = {**errors, **rejected}
        return ctx.response(
            throttle_time_ms=0,
            topics=[
                dict(
                    name=name,
                    topic_id=topic_id,
                    partitions=[
                        dict(partition_index=i, error_code=answers[TopicPartition(name, i)]) for i in indexes
                    ],
                )
                for name, topic_id, indexes in order
            ],
        )

    if not offsets:
        return build({})
    parked: Parked[dict[TopicPartition, ErrorCode]] = Parked(build)

    def then(refused: ErrorCode | None) -> None:
        if refused is None:
            ctx.groups.commit_transactional_offsets(_commit(request, version, offsets), parked.callback)
        else:
            parked.callback(dict.fromkeys(offsets, refused))

    if version >= IMPLICIT_ADD_SINCE:
        _add(ctx, request, then)
    else:
        then(_verify(ctx, request))
    return parked.response()


def _read_topics(
    ctx: RequestContext, request: TxnOffsetCommitRequestBody
) -> tuple[_Order, dict[TopicPartition, ErrorCode], dict[TopicPartition, OffsetAndMetadata]]:
    """The request's topics in order, the partitions refused at once and the offsets to commit."""
    version = ctx.version
    now = ctx.groups.clock.now_ms()
    by_id = version >= TOPIC_IDS_SINCE
    order: _Order = []
    rejected: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    slots: dict[str, int] = {}  # a topic's place in `order`
    for topic in request.topics:
        if by_id:
            info = ctx.topics.get_by_id(topic.topic_id)
            name = info.name if info is not None else _unknown_id(topic.topic_id)
        else:
            name = topic.name
            info = ctx.topics.get(name)
        indexes: list[int] = []
        for p in topic.partitions:
            tp = TopicPartition(name, p.partition_index)
            indexes.append(p.partition_index)
            if by_id and info is None:
                rejected[tp] = ErrorCode.UNKNOWN_TOPIC_ID
            elif info is None or not 0 <= p.partition_index < info.partitions:
                rejected[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                epoch = p.committed_leader_epoch if version >= 2 else -1
                offsets[tp] = OffsetAndMetadata(p.committed_offset, p.committed_metadata, epoch, now)
        listed = slots.get(name)
        if listed is None:
            slots[name] = len(order)
            order.append((name, topic.topic_id if by_id else None, indexes))
        else:  # a topic named twice is one entry of the answer, as Kafka's
            order[listed][2].extend(indexes)

    return order, rejected, offsets


def _commit(
    request: TxnOffsetCommitRequestBody, version: int, offsets: dict[TopicPartition, OffsetAndMetadata]
) -> TxnOffsetCommitRequest:
    """The group coordinator's request (the member fields exist from v3)."""
    named = version >= 3
    return TxnOffsetCommitRequest(
        group_id=request.group_id,
        transactional_id=request.transactional_id,
        producer_id=request.producer_id,
        producer_epoch=request.producer_epoch,
        member_id=request.member_id if named else "",
        generation_id=request.generation_id_or_member_epoch if named else NO_GENERATION,
        group_instance_id=request.group_instance_id if named else None,
        offsets=offsets,
    )


def _unknown_id(topic_id: uuid.UUID | None) -> str:
    """The key a v6 topic of an unknown id is kept under: no topic name has a space or a colon."""
    return f"unknown id: {topic_id}"


def _offsets_partition(ctx: RequestContext, group_id: str) -> TopicPartition:
    return TopicPartition(OFFSETS_TOPIC, ctx.groups.offsets_partition_for(group_id))


def _add(
    ctx: RequestContext, request: TxnOffsetCommitRequestBody, then: Callable[[ErrorCode | None], None]
) -> None:
    """v5: add the group's `__consumer_offsets` partition to the transaction (what AddOffsetsToTxn
    did), then `then(None)`; or `then(error)` when the transaction coordinator refuses."""
    if request.group_id is None:
        then(None)  # the group coordinator answers INVALID_GROUP_ID
        return
    add = AddPartitionsRequest(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        frozenset({_offsets_partition(ctx, request.group_id)}),
        transaction_version=2,
    )
    ctx.transactions.add_partitions(add, lambda error: then(_client_error(ctx, error)))


def _verify(ctx: RequestContext, request: TxnOffsetCommitRequestBody) -> ErrorCode | None:
    """Kafka's transaction verification (KIP-890): the group's `__consumer_offsets` partition must be
    in the producer's ongoing transaction (AddOffsetsToTxn), or no marker would ever end the offsets.
    None when it is; else the error for every partition."""
    if request.group_id is None:
        return None  # the coordinator answers INVALID_GROUP_ID
    tp = _offsets_partition(ctx, request.group_id)
    found = ctx.transactions.verify_partitions(
        request.transactional_id, request.producer_id, request.producer_epoch, (tp,)
    )[tp]
    return _client_error(ctx, found)


def _client_error(ctx: RequestContext, found: ErrorCode) -> ErrorCode | None:
    """None when the partition is in the transaction; else the error this version answers."""
    if found is ErrorCode.NONE:
        return None
    if found is ErrorCode.PRODUCER_FENCED and ctx.version >= IMPLICIT_ADD_SINCE:
        # As Kafka's partition-adding path answers an old epoch (Produce v12 does the same).
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if found in _RETRIABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if found is ErrorCode.TRANSACTION_ABORTABLE and ctx.version < ABORTABLE_SINCE:
        return ErrorCode.INVALID_TXN_STATE
    return for_version("TxnOffsetCommit", ctx.version, found)
