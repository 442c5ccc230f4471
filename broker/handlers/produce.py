"""Produce (0): append the producer's record batches to the partition logs, as sent.

v3 transactional id + magic v2 only; v5 log start offset; v7 ZStandard; v8 record errors;
v9 flexible; v10 current leader (tagged); v11 TRANSACTION_ABORTABLE; v12 no change; v13 topic ids.
acks 0/1/-1 all mean "written to the log file" on a single broker; acks=0 gets no response.
A transactional batch is appended only if its partition is in the producer's open transaction
(the coordinator's verification, KIP-890 part 1), else Kafka's error for the version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.handlers.metadata import INTERNAL_TOPICS
from kafkito.broker.log.batch import ATTRIBUTES_AT, HEADER_SIZE, TRANSACTIONAL_MASK, parse_header
from kafkito.broker.log.errors import LogError
from kafkito.broker.transactions.errors import for_version
from kafkito.protocol.errors import ErrorCode

API_KEY = 0
VERSIONS = (3, 11)


class PartitionData(Protocol):
    index: int
    records: bytes | None


class TopicData(Protocol):
    name: str
    partition_data: Sequence[PartitionData]


class ProduceRequest(Protocol):
    """The fields of kafka-python's ProduceRequest this handler reads."""

    acks: int
    transactional_id: str | None
    topic_data: Sequence[TopicData]


def _partition_response(
    index: int, error: ErrorCode, message: str | None = None, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        index=index,
        error_code=error,
        base_offset=-1,
        log_append_time_ms=-1,
        log_start_offset=-1,
        record_errors=[],
        error_message=message,
    )
    out.update(extra)
    return out


_ATTRIBUTES_LOW = ATTRIBUTES_AT + 1
# Verification errors a producer should retry: older clients know them only as NOT_ENOUGH_REPLICAS.
_RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
)


def _is_transactional(records: bytes | None) -> bool:
    """Whether the first batch has the transactional attribute (the low byte of its attributes)."""
    if records is None or len(records) <= _ATTRIBUTES_LOW:
        return False
    return bool(records[_ATTRIBUTES_LOW] & TRANSACTIONAL_MASK)


def _verify(ctx: RequestContext, transactional_id: str, topic: str, p: PartitionData) -> ErrorCode | None:
    """None if the records may be appended; else the error for this partition."""
    records = p.records
    if not records or len(records) < HEADER_SIZE:
        return None  # the append judges it
    header = parse_header(records)
    if not header.is_transactional:
        return None
    tp = TopicPartition(topic, p.index)
    found = ctx.transactions.verify_partitions(
        transactional_id, header.producer_id, header.producer_epoch, (tp,)
    )[tp]
    if found is ErrorCode.NONE:
        return None
    if found is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if found in _RETRIABLE:
        return ErrorCode.NOT_ENOUGH_REPLICAS
    return for_version("Produce", ctx.version, found)


def handle(ctx: RequestContext, request: ProduceRequest) -> Any:
    get_log = ctx.topics.get_log
    acks = request.acks
    topics: list[dict[str, Any]] = []
    for t in request.topic_data:
        name = t.name
        parts: list[dict[str, Any]] = []
        for p in t.partition_data:
            if acks not in (-1, 0, 1):
                parts.append(_partition_response(p.index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            if name in INTERNAL_TOPICS:
                parts.append(
                    _partition_response(
                        p.index, ErrorCode.INVALID_TOPIC_EXCEPTION, f"cannot append to internal topic {name}"
                    )
                )
                continue
            if request.transactional_id is not None:
                refused = _verify(ctx, request.transactional_id, name, p)
                if refused is not None:
                    parts.append(_partition_response(p.index, refused))
                    continue
            elif _is_transactional(p.records):
                # Kafka: transactional records need the transactional id they are authorized by.
                parts.append(_partition_response(p.index, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
                continue
            try:
                plog = get_log(name, p.index)
                info = plog.append(p.records or b"")
            except LogError as exc:
                parts.append(_partition_response(p.index, exc.code, exc.message or None))
                continue
            parts.append(
                _partition_response(
                    p.index,
                    ErrorCode.NONE,
                    base_offset=info.base_offset,
                    log_append_time_ms=info.log_append_time,
                    log_start_offset=info.log_start_offset,
                )
            )
        topics.append(dict(name=name, partition_responses=parts))
    if acks == 0:
        return None
    return ctx.response(responses=topics, throttle_time_ms=0)
