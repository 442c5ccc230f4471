"""DescribeTransactions (65): state, producer, timeout, start time and partitions of transactional ids.

v0 only (flexible). The start time is epoch milliseconds as the coordinator stamped it (-1 when no
transaction is open). An id answered with an error (unknown, empty, loading) carries nothing else:
the schema's defaults, 0 for the producer, its epoch, the timeout and the start time, as Kafka.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext

API_KEY = 65
VERSIONS = (0, 0)


class DescribeTransactionsRequestBody(Protocol):
    """The fields of kafka-python's DescribeTransactionsRequest this handler reads."""

    transactional_ids: Sequence[str]


def handle(ctx: RequestContext, request: DescribeTransactionsRequestBody) -> Any:
    txns = ctx.transactions
    states = []
    for txn_id in request.transactional_ids:
        d = txns.describe(txn_id)
        if d.error:
            states.append(_failed(d.transactional_id, d.error))
            continue
        states.append(
            dict(
                error_code=d.error,
                transactional_id=d.transactional_id,
                transaction_state=d.state,
                transaction_timeout_ms=d.timeout_ms,
                transaction_start_time_ms=d.start_ms,
                producer_id=d.producer_id,
                producer_epoch=d.producer_epoch,
                topics=[dict(topic=topic, partitions=list(parts)) for topic, parts in d.topics],
            )
        )
    return ctx.response(throttle_time_ms=0, transaction_states=states)


def _failed(transactional_id: str, error: int) -> dict[str, Any]:
    return dict(
        error_code=error,
        transactional_id=transactional_id,
        transaction_state="",
        transaction_timeout_ms=0,
        transaction_start_time_ms=0,
        producer_id=0,
        producer_epoch=0,
        topics=[],
    )
