"""EndTxn (26): commit or abort the producer's transaction.

v1 no change; v2 PRODUCER_FENCED; v3 flexible; v4 TRANSACTION_ABORTABLE (KIP-890); v5 is a
transactions V2 client (KIP-890 part 2): the coordinator bumps the producer epoch at the end of every
transaction (a new producer id at epoch 0 once the epoch runs out) and the response carries the id
and epoch to go on with. As in Kafka, the version decides: v5 gets V2, v0-v4 V1. Answered once the
decision is durable; the markers follow.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import EndTxnRequest, EndTxnResult

API_KEY = 26
VERSIONS = (0, 5)

TRANSACTION_V2_SINCE = 5


class EndTxnRequestBody(Protocol):
    """The fields of kafka-python's EndTxnRequest this handler reads."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool


def handle(ctx: RequestContext, request: EndTxnRequestBody) -> Any:
    version = ctx.version

    def build(result: EndTxnResult) -> Any:
        return ctx.response(
            throttle_time_ms=0,
            error_code=for_version("EndTxn", version, result.error),
            producer_id=result.producer_id,  # v5+
            producer_epoch=result.producer_epoch,
        )

    parked: Parked[EndTxnResult] = Parked(build)
    end = EndTxnRequest(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        bool(request.committed),
        transaction_version=2 if version >= TRANSACTION_V2_SINCE else 0,
    )
    ctx.transactions.end_transaction(end, parked.callback)
    return parked.response()
