"""ListTransactions (66): the transactional ids this coordinator owns, filtered.

Filters (all given must match): states by name, producer ids, v1 `duration_filter` (open longer
than that many ms; negative: none), v2 `transactional_id_pattern` (a regular expression the whole id
matches; an invalid one is INVALID_REGULAR_EXPRESSION, KIP-1152). v0 flexible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 66
VERSIONS = (0, 2)


class ListTransactionsRequestBody(Protocol):
    """The fields of kafka-python's ListTransactionsRequest this handler reads."""

    state_filters: Sequence[str]
    producer_id_filters: Sequence[int]
    duration_filter: int  # v1+
    transactional_id_pattern: str | None  # v2+


def handle(ctx: RequestContext, request: ListTransactionsRequestBody) -> Any:
    pattern: re.Pattern[str] | None = None
    if ctx.version >= 2 and request.transactional_id_pattern:
        try:
            pattern = re.compile(request.transactional_id_pattern)
        except re.error:
            return ctx.response(
                throttle_time_ms=0,
                error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                unknown_state_filters=[],
                transaction_states=[],
            )
    duration = request.duration_filter if ctx.version >= 1 else -1
    result = ctx.transactions.list_transactions(
        list(request.state_filters), list(request.producer_id_filters), duration
    )
    return ctx.response(
        throttle_time_ms=0,
        error_code=result.error,
        unknown_state_filters=list(result.unknown_state_filters),
        transaction_states=[
            dict(transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state)
            for t in result.transactions
            if pattern is None or pattern.fullmatch(t.transactional_id)
        ],
    )
