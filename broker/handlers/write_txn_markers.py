"""WriteTxnMarkers (27): write COMMIT or ABORT control markers to partitions this broker leads.

Kafka's transaction coordinators send it to partition leaders; an Admin client sends it too, to end a
hanging transaction (`abortTransaction`, `kafka-transactions.sh abort`, `kafkito transactions abort`).
Each marker names a producer id and epoch, the result, the coordinator epoch and its partitions; it
is written through the broker's marker writer, the one the transaction coordinator uses, so a data
partition gets its control batch (the producer's epoch and the coordinator epoch are checked:
INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) and a `__consumer_offsets` partition also
commits or drops the producer's pending transactional offsets. A partition the broker does not have
is UNKNOWN_TOPIC_OR_PARTITION. The response has an error per partition, in the request's order.
With an authorizer the request needs CLUSTER_ACTION on the cluster, as in Kafka, else every partition
is CLUSTER_AUTHORIZATION_FAILED: Kafka's whole-request refusal, its getErrorResponse, built by
`protocol/error_answers.py` (one result per producer id, each partition once, in Kafka's hash-map order).

v0 was removed in Kafka 4.0 (kafkito serves it as 3.9 did, unless
`kafkito.api.versions.kafka4.minimums`); v1 flexible; v2 adds each marker's TransactionVersion
(KIP-1228), which only says which protocol the coordinator ran: the marker written is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import structlog

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.security.acls import AclOperation
from kafkito.broker.transactions.marker_writer import BrokerMarkerWriter
from kafkito.broker.transactions.ports import MarkerRequest, TransactionResult
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode

API_KEY = 27
VERSIONS = (0, 2)

log = structlog.get_logger("kafkito.transactions")


class MarkerTopic(Protocol):
    name: str
    partition_indexes: Sequence[int]


class WritableTxnMarker(Protocol):
    producer_id: int
    producer_epoch: int
    transaction_result: bool  # false: ABORT, true: COMMIT
    topics: Sequence[MarkerTopic]
    coordinator_epoch: int


class WriteTxnMarkersRequestBody(Protocol):
    """The fields of kafka-python's WriteTxnMarkersRequest this handler reads."""

    markers: Sequence[WritableTxnMarker]


Errors = Mapping[TopicPartition, ErrorCode]


def handle(ctx: RequestContext, request: WriteTxnMarkersRequestBody) -> Any:
    markers = list(request.markers)
    authorizer = ctx.authorizer
    if authorizer is not None and not authorizer.authorize_cluster(ctx, AclOperation.CLUSTER_ACTION):
        return error_response(API_KEY, ctx.version, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if not markers:
        return ctx.response(markers=[])
    writer = BrokerMarkerWriter(ctx.topics.get_log, ctx.groups)
    answers: list[Errors | None] = [None] * len(markers)
    future: asyncio.Future[Any] | None = None

    def build() -> Any:
        return ctx.response(markers=[_result(m, a or {}) for m, a in zip(markers, answers, strict=True)])

    def answered(index: int) -> Any:
        def done(errors: Errors) -> None:
            answers[index] = errors
            if future is not None and not future.done() and all(a is not None for a in answers):
                future.set_result(build())

        return done

    for index, marker in enumerate(markers):
        partitions = frozenset(TopicPartition(t.name, p) for t in marker.topics for p in t.partition_indexes)
        result = TransactionResult.COMMIT if marker.transaction_result else TransactionResult.ABORT
        log.info(
            "txn.markers_requested",
            client_id=ctx.client_id,
            producer_id=marker.producer_id,
            producer_epoch=marker.producer_epoch,
            result=result.name,
            partitions=len(partitions),
        )
        request_one = MarkerRequest(
            "", marker.producer_id, marker.producer_epoch, result, partitions, marker.coordinator_epoch
        )
        writer.write_markers(request_one, answered(index))
    if all(a is not None for a in answers):
        return build()
    future = asyncio.get_running_loop().create_future()
    return future


def _result(marker: WritableTxnMarker, errors: Errors) -> dict[str, Any]:
    """The marker's answer: each partition's error from `errors` (UNKNOWN_SERVER_ERROR if missing)."""
    return dict(
        producer_id=marker.producer_id,
        topics=[
            dict(
                name=t.name,
                partitions=[
                    dict(
                        partition_index=p,
                        error_code=errors.get(TopicPartition(t.name, p), ErrorCode.UNKNOWN_SERVER_ERROR),
                    )
                    for p in t.partition_indexes
                ],
            )
            for t in marker.topics
        ],
    )
