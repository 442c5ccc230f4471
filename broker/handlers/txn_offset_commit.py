"""TxnOffsetCommit (28): a transactional producer commits a group's offsets inside its transaction.

The offsets are written in the producer's transactional batch to the group's `__consumer_offsets`
partition and stay pending until the transaction's marker (`GroupCoordinator.complete_transaction`).
v1 no change; v2 committed_leader_epoch; v3 flexible, member_id, generation_id and
group_instance_id (checked against the group when given); v4 TRANSACTION_ABORTABLE may be answered
(KIP-890). v5 (transaction V2, where this request also adds the partition to the transaction) is
not offered yet. As Kafka verifies, the group's partition must already be in the producer's ongoing
transaction (AddOffsetsToTxn): otherwise INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4). Unknown
topics or partitions get UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition, TxnOffsetCommitRequest
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.protocol.errors import ErrorCode

API_KEY = 28
VERSIONS = (0, 4)

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
    refused = _verify(ctx, request)
    if refused is not None:
        return build(dict.fromkeys(offsets, refused))
    parked: Parked[dict[TopicPartition, ErrorCode]] = Parked(build)
    named = version >= 3
    ctx.groups.commit_transactional_offsets(
        TxnOffsetCommitRequest(
            group_id=request.group_id,
            transactional_id=request.transactional_id,
            producer_id=request.producer_id,
            producer_epoch=request.producer_epoch,
            member_id=request.member_id if named else "",
            generation_id=request.generation_id if named else NO_GENERATION,
            group_instance_id=request.group_instance_id if named else None,
            offsets=offsets,
        ),
        parked.callback,
    )
    return parked.response()


def _verify(ctx: RequestContext, request: TxnOffsetCommitRequestBody) -> ErrorCode | None:
    """Kafka's transaction verification (KIP-890): the group's `__consumer_offsets` partition must be
    in the producer's ongoing transaction (AddOffsetsToTxn), or no marker would ever end the offsets.
    None when it is; else the error for every partition."""
    if request.group_id is None:
        return None  # the coordinator answers INVALID_GROUP_ID
    tp = TopicPartition(OFFSETS_TOPIC, ctx.groups.offsets_partition_for(request.group_id))
    found = ctx.transactions.verify_partitions(
        request.transactional_id, request.producer_id, request.producer_epoch, (tp,)
    )[tp]
    if found is ErrorCode.NONE:
        return None
    if found in _RETRIABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if found is ErrorCode.TRANSACTION_ABORTABLE and ctx.version < ABORTABLE_SINCE:
        return ErrorCode.INVALID_TXN_STATE
    return for_version("TxnOffsetCommit", ctx.version, found)
