"""AddPartitionsToTxn (24): add partitions to a producer's transaction (or, v4+, verify they are in it).

v1 no change; v2 PRODUCER_FENCED; v3 flexible; v4 batches transactions, each with `verify_only`,
and a top-level error (KIP-890: used between brokers); v5 TRANSACTION_ABORTABLE. A partition that
does not exist gets UNKNOWN_TOPIC_OR_PARTITION and the others of its transaction
OPERATION_NOT_ATTEMPTED, as Kafka answers; otherwise one coordinator error covers them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.log.errors import LogError
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.marker_writer import OFFSETS_TOPIC
from kafkito.broker.transactions.requests import AddPartitionsRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 24
VERSIONS = (0, 5)

Errors = dict[TopicPartition, ErrorCode]


class TopicBody(Protocol):
    name: str
    partitions: Sequence[int]


class TransactionBody(Protocol):
    transactional_id: str
    producer_id: int
    producer_epoch: int
    verify_only: bool
    topics: Sequence[TopicBody]


class AddPartitionsToTxnRequestBody(Protocol):
    """The fields of kafka-python's AddPartitionsToTxnRequest this handler reads."""

    v3_and_below_transactional_id: str  # v0-3
    v3_and_below_producer_id: int
    v3_and_below_producer_epoch: int
    v3_and_below_topics: Sequence[TopicBody]
    transactions: Sequence[TransactionBody]  # v4+


def _partitions(topics: Sequence[TopicBody]) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(t.name, p) for t in topics for p in t.partitions)


def _topic_results(errors: Errors) -> list[dict[str, Any]]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for tp, error in sorted(errors.items()):
        by_topic.setdefault(tp.topic, []).append(
            dict(partition_index=tp.partition, partition_error_code=error)
        )
    return [dict(name=name, results_by_partition=parts) for name, parts in by_topic.items()]


def _missing(ctx: RequestContext, partitions: frozenset[TopicPartition]) -> frozenset[TopicPartition]:
    missing = set()
    for tp in partitions:
        if tp.topic == OFFSETS_TOPIC:
            continue  # the group coordinator's partitions (AddOffsetsToTxn's, sent here by some clients)
        try:
            ctx.topics.get_log(tp.topic, tp.partition)
        except LogError:
            missing.add(tp)
    return frozenset(missing)


def _client_error(version: int, error: ErrorCode) -> ErrorCode:
    return for_version("AddPartitionsToTxn", version, error)


def _one(
    ctx: RequestContext,
    txn_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: frozenset[TopicPartition],
    verify_only: bool,
    answer: Callable[[Errors], None],
) -> None:
    """Add (or verify) one transaction's partitions; `answer` gets an error per partition."""
    version = ctx.version
    if not partitions:
        answer({})
        return
    missing = _missing(ctx, partitions)
    if missing:
        answer(
            {
                tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if tp in missing
                else ErrorCode.OPERATION_NOT_ATTEMPTED
                for tp in partitions
            }
        )
        return
    if verify_only:
        found = ctx.transactions.verify_partitions(txn_id, producer_id, producer_epoch, partitions)
        answer({tp: _client_error(version, e) for tp, e in found.items()})
        return

    def added(error: ErrorCode) -> None:
        answer(dict.fromkeys(partitions, _client_error(version, error)))

    # As Kafka reads the version: v4+ (sent by brokers for a V2 client's Produce) is transactions V2.
    txn_version = 2 if version >= 4 else 0
    ctx.transactions.add_partitions(
        AddPartitionsRequest(txn_id, producer_id, producer_epoch, partitions, txn_version), added
    )


def handle(ctx: RequestContext, request: AddPartitionsToTxnRequestBody) -> Any:
    if ctx.version < 4:
        return _handle_v3(ctx, request)
    transactions = list(request.transactions)
    results: dict[int, tuple[str, Errors]] = {}

    def build(_: None) -> Any:
        return ctx.response(
            throttle_time_ms=0,
            error_code=ErrorCode.NONE,
            results_by_transaction=[
                dict(transactional_id=txn_id, topic_results=_topic_results(errors))
                for txn_id, errors in (results[i] for i in range(len(transactions)))
            ],
        )

    parked: Parked[None] = Parked(build)
    if not transactions:
        parked.callback(None)
    for i, txn in enumerate(transactions):

        def answer(errors: Errors, i: int = i, txn_id: str = txn.transactional_id) -> None:
            results[i] = (txn_id, errors)
            if len(results) == len(transactions):
                parked.callback(None)

        partitions = _partitions(txn.topics)
        _one(
            ctx,
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            partitions,
            txn.verify_only,
            answer,
        )
    return parked.response()


def _handle_v3(ctx: RequestContext, request: AddPartitionsToTxnRequestBody) -> Any:
    def build(errors: Errors) -> Any:
        return ctx.response(throttle_time_ms=0, results_by_topic_v3_and_below=_topic_results(errors))

    parked: Parked[Errors] = Parked(build)
    _one(
        ctx,
        request.v3_and_below_transactional_id,
        request.v3_and_below_producer_id,
        request.v3_and_below_producer_epoch,
        _partitions(request.v3_and_below_topics),
        False,
        parked.callback,
    )
    return parked.response()
