"""InitProducerId (22): a producer id and epoch; with a transactional id, from the transaction coordinator.

v1 no change; v2 flexible; v3 existing producer id/epoch to bump the epoch (KIP-360); v4
PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH; v5 TRANSACTION_ABORTABLE (KIP-890). (v6, 2PC, is
unstable in Kafka 4.x and not served.) A transactional request is parked until the coordinator
answers: after its record is written, or after the abort of the previous epoch's open transaction.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import InitProducerIdRequest as TxnInitRequest
from kafkito.broker.transactions.requests import InitProducerIdResult
from kafkito.protocol.errors import ErrorCode

API_KEY = 22
VERSIONS = (0, 5)

_MAX_EPOCH = 32767


class InitProducerIdRequest(Protocol):
    """The fields of kafka-python's InitProducerIdRequest this handler reads."""

    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int  # v3+
    producer_epoch: int  # v3+


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> Any:
    if request.transactional_id is not None:
        return _transactional(ctx, request)
    ids = ctx.producer_ids
    producer_id, epoch = -1, -1
    if ctx.version >= 3:
        producer_id, epoch = request.producer_id, request.producer_epoch
    if producer_id >= 0 and 0 <= epoch < _MAX_EPOCH - 1:
        epoch += 1  # KIP-360: an idempotent producer bumps its epoch to reset sequences
    else:
        producer_id, epoch = ids.next_id(), 0
    return ctx.response(
        throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=epoch
    )


def _transactional(ctx: RequestContext, request: InitProducerIdRequest) -> Any:
    version = ctx.version

    def build(result: InitProducerIdResult) -> Any:
        return ctx.response(
            throttle_time_ms=0,
            error_code=for_version("InitProducerId", version, result.error),
            producer_id=result.producer_id,
            producer_epoch=result.producer_epoch,
        )

    parked: Parked[InitProducerIdResult] = Parked(build)
    txn_request = TxnInitRequest(
        request.transactional_id,
        request.transaction_timeout_ms,
        request.producer_id if version >= 3 else -1,
        request.producer_epoch if version >= 3 else -1,
    )
    ctx.transactions.init_producer_id(txn_request, parked.callback)
    return parked.response()
