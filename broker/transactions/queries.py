"""DescribeTransactions and ListTransactions: read-only views of the coordinator's transactions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from kafkito.broker.transactions.requests import (
    DescribedTransaction,
    ListTransactionsResult,
    TransactionListing,
)
from kafkito.broker.transactions.runtime import TxnRuntime
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode


def describe(rt: TxnRuntime, transactional_id: str) -> DescribedTransaction:
    if not transactional_id:
        return DescribedTransaction(transactional_id, ErrorCode.INVALID_REQUEST)
    if rt.sink.is_loading(transactional_id):
        return DescribedTransaction(transactional_id, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    meta = rt.transactions.get(transactional_id)
    if meta is None or rt.pending.get(transactional_id) is TxnState.DEAD:
        return DescribedTransaction(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    topics: dict[str, list[int]] = defaultdict(list)
    for tp in meta.partitions:
        topics[tp.topic].append(tp.partition)
    return DescribedTransaction(
        transactional_id,
        ErrorCode.NONE,
        state=meta.state.value,
        producer_id=meta.producer_id,
        producer_epoch=meta.producer_epoch,
        timeout_ms=meta.timeout_ms,
        start_ms=meta.start_ms,
        topics=tuple((topic, tuple(sorted(ids))) for topic, ids in sorted(topics.items())),
    )


def list_transactions(
    rt: TxnRuntime,
    state_filters: Collection[str] = (),
    producer_id_filters: Collection[int] = (),
    duration_filter_ms: int = -1,
) -> ListTransactionsResult:
    """Ids matching every filter given: states by name, producer ids, and (v1) running longer than
    `duration_filter_ms` (negative: no filter). Unknown state names are reported, as Kafka does."""
    if rt.sink.is_any_loading():
        return ListTransactionsResult(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    unknown = tuple(sorted(name for name in state_filters if TxnState.from_name(name) is None))
    states = {state for name in state_filters if (state := TxnState.from_name(name)) is not None}
    if state_filters and not states:
        return ListTransactionsResult(ErrorCode.NONE, (), unknown)
    now = rt.now_ms()
    found = [
        TransactionListing(txn_id, meta.producer_id, meta.state.value)
        for txn_id, meta in sorted(rt.transactions.items())
        if (not states or meta.state in states)
        and (not producer_id_filters or meta.producer_id in producer_id_filters)
        and (duration_filter_ms < 0 or now - meta.start_ms > duration_filter_ms)
    ]
    return ListTransactionsResult(ErrorCode.NONE, tuple(found), unknown)
