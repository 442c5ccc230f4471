"""InitProducerId (22): a producer id and epoch for idempotent producers (transactions are not supported).

v1 no change; v2 flexible; v3 existing producer id/epoch to bump the epoch (KIP-360); v4 no change;
v5 PRODUCER_FENCED instead of INVALID_PRODUCER_EPOCH.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 22
VERSIONS = (0, 5)

_MAX_EPOCH = 32767


class InitProducerIdRequest(Protocol):
    """The fields of kafka-python's InitProducerIdRequest this handler reads."""

    transactional_id: str | None
    producer_id: int  # v3+
    producer_epoch: int  # v3+


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> Any:
    if request.transactional_id is not None:
        return ctx.response(
            throttle_time_ms=0,
            error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            producer_id=-1,
            producer_epoch=-1,
        )
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
