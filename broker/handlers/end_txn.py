"""EndTxn (26): commit or abort the producer's transaction.

v1 no change; v2 PRODUCER_FENCED; v3 flexible; v4 TRANSACTION_ABORTABLE (KIP-890); v5 the response
carries the producer id and epoch (KIP-890 part 2, transaction version 2). This broker runs
transaction version 1 (it finalizes no `transaction.version` feature), so the epoch is not bumped
per transaction and v5 answers with the producer's current id and epoch. Answered once the
decision is durable; the markers follow.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import EndTxnRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 26
VERSIONS = (0, 5)


class EndTxnRequestBody(Protocol):
    """The fields of kafka-python's EndTxnRequest this handler reads."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool


def handle(ctx: RequestContext, request: EndTxnRequestBody) -> Any:
    version = ctx.version

    def build(error: ErrorCode) -> Any:
        error = for_version("EndTxn", version, error)
        ok = error is ErrorCode.NONE
        return ctx.response(
            throttle_time_ms=0,
            error_code=error,
            producer_id=request.producer_id if ok else -1,
            producer_epoch=request.producer_epoch if ok else -1,
        )

    parked: Parked[ErrorCode] = Parked(build)
    end = EndTxnRequest(
        request.transactional_id, request.producer_id, request.producer_epoch, bool(request.committed)
    )
    ctx.transactions.end_txn(end, parked.callback)
    return parked.response()
