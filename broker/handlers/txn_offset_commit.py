"""TxnOffsetCommit (28): a transactional producer commits a group's offsets inside its transaction.

The offsets are written in the producer's transactional batch to the group's `__consumer_offsets`
partition and stay pending until the transaction's marker (`GroupCoordinator.complete_transaction`).
v1 no change; v2 committed_leader_epoch; v3 flexible, member_id, generation_id and
group_instance_id (checked against the group when given); v4 TRANSACTION_ABORTABLE may be answered
(KIP-890). Up to v4, as Kafka verifies, the group's partition must already be in the producer's
ongoing transaction (AddOffsetsToTxn): otherwise INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4).
v5 is a transactions V2 client (KIP-890 part 2): the broker adds the group's partition to the
transaction itself, so no AddOffsetsToTxn comes first; the commit waits for that write. Unknown
topics or partitions get UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition, TxnOffsetCommitRequest
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import AddPartitionsRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 28
VERSIONS = (0, 5)
IMPLICIT_ADD_SINCE = 5

NO_GENERATION = -1
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
    name: str
    partitions: Sequence[TxnOffsetCommitPartition]


class TxnOffsetCommitRequestBody(Protocol):
    """The fields of kafka-python's TxnOffsetCommitRequest this handler reads."""

    transactional_id: str
    group_id: str | None
    producer_id: int
    producer_epoch: int
    generation_id: int  # v3+
    member_id: str  # v3+
    group_instance_id: str | None  # v3+
    topics: Sequence[TxnOffsetCommitTopic]


def handle(ctx: RequestContext, request: TxnOffsetCommitRequestBody) -> Any:
    version = ctx.version
    now = ctx.groups.clock.now_ms()
    order: list[tuple[str, list[int]]] = []
    rejected: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for topic in request.topics:
        info = ctx.topics.get(topic.name)
        indexes: list[int] = []
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            indexes.append(p.partition_index)
            if info is None or not 0 <= p.partition_index < info.partitions:
                rejected[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                epoch = p.committed_leader_epoch if version >= 2 else -1
                offsets[tp] = OffsetAndMetadata(p.committed_offset, p.committed_metadata, epoch, now)
        order.append((topic.name, indexes))

    def build(errors: dict[TopicPartition, ErrorCode]) -> Any:
        answers = {**errors, **rejected}
        return ctx.response(
            throttle_time_ms=0,
            topics=[
                dict(
                    name=name,
                    partitions=[
                        dict(partition_index=i, error_code=answers[TopicPartition(name, i)]) for i in indexes
                    ],
                )
                for name, indexes in order
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
        generation_id=request.generation_id if named else NO_GENERATION,
        group_instance_id=request.group_instance_id if named else None,
        offsets=offsets,
    )


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
    if found in _RETRIABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if found is ErrorCode.TRANSACTION_ABORTABLE and ctx.version < ABORTABLE_SINCE:
        return ErrorCode.INVALID_TXN_STATE
    return for_version("TxnOffsetCommit", ctx.version, found)
