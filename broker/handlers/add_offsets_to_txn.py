"""AddOffsetsToTxn (25): add the group's `__consumer_offsets` partition to the producer's transaction.

v1 no change; v2 PRODUCER_FENCED; v3 flexible; v4 TRANSACTION_ABORTABLE (KIP-890). Answered once
the transaction's record is written (TxnOffsetCommit to the group coordinator follows).

As Kafka, the group id is not checked here: an empty one names its `__consumer_offsets` partition like
any other (TxnOffsetCommit refuses it later); an empty transactional id is INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import AddOffsetsRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 25
VERSIONS = (0, 4)


class AddOffsetsToTxnRequestBody(Protocol):
    """The fields of kafka-python's AddOffsetsToTxnRequest this handler reads."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


def handle(ctx: RequestContext, request: AddOffsetsToTxnRequestBody) -> Any:
    version = ctx.version

    def build(error: ErrorCode) -> Any:
        return ctx.response(throttle_time_ms=0, error_code=for_version("AddOffsetsToTxn", version, error))

    parked: Parked[ErrorCode] = Parked(build)
    ctx.transactions.add_offsets(
        AddOffsetsRequest(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
        ),
        parked.callback,
    )
    return parked.response()
