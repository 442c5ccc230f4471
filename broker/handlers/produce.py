"""Produce (0): append the producer's record batches to the partition logs, as sent.

v0-v2 (message sets of format v0/v1, converted to a v2 batch on append as Kafka does; v1 throttle
time, v2 log append time) are answered by `_LEGACY`, chosen once per version by dispatch;
v3 transactional id + magic v2 only; v5 log start offset; v7 ZStandard (UNSUPPORTED_COMPRESSION_TYPE
before); v8 record errors (KIP-467: a batch refused for some records names them, and only such a
refusal carries an error message, as in Kafka);
v9 flexible; v10 current leader (tagged); v11 TRANSACTION_ABORTABLE; v12 same body, from a
transactions V2 client (KIP-890 part 2); v13 topic ids instead of names (KIP-516): a topic id no topic
has is UNKNOWN_TOPIC_ID for each of its partitions, as Kafka answers, and the answer names topics by id.
acks 0/1/-1 all mean "written to the log file" on a single broker; acks=0 gets no response.
Up to v11 a transactional batch is appended only if its partition is in the producer's open
transaction (the coordinator's verification, KIP-890 part 1), else Kafka's error for the version.
From v12 the broker adds the partition to the transaction itself (what AddPartitionsToTxn did,
without a network hop): the request waits for that write, then appends.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.handlers.metadata import INTERNAL_TOPICS
from kafkito.broker.handlers.parked import Parked
from kafkito.broker.log.batch import (
    ATTRIBUTES_AT,
    COMPRESSION_MASK,
    HEADER_SIZE,
    MAGIC_AT,
    MAX_CODEC_ID,
    TRANSACTIONAL_MASK,
    parse_header,
)
from kafkito.broker.log.errors import LogError, RecordValidationError
from kafkito.broker.log.legacy_format import is_legacy, to_v2
from kafkito.broker.log.partition_log import AppendInfo, PartitionLog
from kafkito.broker.transactions.errors import for_version
from kafkito.broker.transactions.requests import AddPartitionsRequest
from kafkito.protocol.errors import ErrorCode

API_KEY = 0
VERSIONS = (0, 13)
FIRST_V2_ONLY = 3  # from v3 the records are v2 batches

ZSTD_SINCE = 7  # older requests may not carry zstd batches
ZSTD = 4
IMPLICIT_ADD_SINCE = 12  # transactions V2: the produce request adds its partitions to the transaction
TOPIC_IDS_SINCE = 13  # topics named by id (KIP-516)
_UNRESOLVED = ""  # the name of a v13 topic whose id no topic has (v13 carries no name on the wire)
# A partition's fate decided before the append: an error to answer, or ADDED (in the transaction).
ADDED = ErrorCode.NONE
Decided = dict[tuple[str, int], ErrorCode]


class PartitionData(Protocol):
    index: int
    records: bytes | None


class TopicData(Protocol):
    name: str  # up to v12; from v13 the name its topic_id resolves to (`_resolve_ids`)
    topic_id: uuid.UUID  # v13+
    partition_data: Sequence[PartitionData]


class ProduceRequest(Protocol):
    """The fields of kafka-python's ProduceRequest this handler reads."""

    acks: int
    transactional_id: str | None
    topic_data: Sequence[TopicData]


def _partition_response(index: int, error: ErrorCode, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        index=index,
        error_code=error,
        base_offset=-1,
        log_append_time_ms=-1,
        log_start_offset=-1,
        record_errors=[],
        error_message=None,
    )
    out.update(extra)
    return out


def _failed_append(index: int, exc: LogError, log_start_offset: int) -> dict[str, Any]:
    """A partition whose append failed. As in Kafka, only a batch refused for some of its records
    (KIP-467) says why: the records in record_errors, the summary in error_message (v8+), beside the
    partition's log start offset; every other error goes without a message."""
    if not isinstance(exc, RecordValidationError):
        return _partition_response(index, exc.code)
    return _partition_response(
        index,
        exc.code,
        log_start_offset=log_start_offset,
        record_errors=[
            dict(batch_index=e.batch_index, batch_index_error_message=e.message) for e in exc.record_errors
        ],
        error_message=exc.message,
    )


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
    """Whether the first batch is a v2 batch with the transactional attribute (the low byte of its
    attributes); a v0/v1 message set has no such attribute."""
    if records is None or len(records) <= _ATTRIBUTES_LOW:
        return False
    return bool(records[_ATTRIBUTES_LOW] & TRANSACTIONAL_MASK) and records[MAGIC_AT] == 2


def _client_error(ctx: RequestContext, found: ErrorCode) -> ErrorCode:
    """A coordinator's answer about a transactional partition, as Produce of this version says it."""
    if found is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if found in _RETRIABLE:
        return ErrorCode.NOT_ENOUGH_REPLICAS
    return for_version("Produce", ctx.version, found)


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
    return _client_error(ctx, found)


def _to_add(ctx: RequestContext, request: ProduceRequest) -> dict[tuple[int, int], set[TopicPartition]]:
    """The partitions of this request's transactional batches, by the (producer id, epoch) sending
    them: those a v12 request adds to the transaction. Partitions that cannot be appended to (an
    internal topic, one that does not exist) are left to the append to refuse."""
    wanted: dict[tuple[int, int], set[TopicPartition]] = {}
    for t in request.topic_data:
        if t.name in INTERNAL_TOPICS:
            continue
        for p in t.partition_data:
            records = p.records
            if not records or len(records) < HEADER_SIZE or not _is_transactional(records):
                continue
            try:
                ctx.topics.get_log(t.name, p.index)
            except LogError:
                continue
            header = parse_header(records)
            wanted.setdefault((header.producer_id, header.producer_epoch), set()).add(
                TopicPartition(t.name, p.index)
            )
    return wanted


def _add_then_append(
    ctx: RequestContext,
    request: ProduceRequest,
    transactional_id: str,
    wanted: dict[tuple[int, int], set[TopicPartition]],
) -> Any:
    """Add the partitions to the transaction (one write per producer id and epoch), then append."""
    decided: Decided = {}
    waiting = set(wanted)

    def build(_: None) -> Any:
        return _append_all(ctx, request, decided)

    parked: Parked[None] = Parked(build)
    for key, partitions in wanted.items():

        def added(
            error: ErrorCode, key: tuple[int, int] = key, partitions: set[TopicPartition] = partitions
        ) -> None:
            answer = ADDED if error is ErrorCode.NONE else _client_error(ctx, error)
            decided.update(((tp.topic, tp.partition), answer) for tp in partitions)
            waiting.discard(key)
            if not waiting:
                parked.callback(None)

        pid, epoch = key
        add = AddPartitionsRequest(transactional_id, pid, epoch, frozenset(partitions), transaction_version=2)
        ctx.transactions.add_partitions(add, added)
    response = parked.response()
    if request.acks == 0:
        return None  # the append still happens, once the partitions are added
    return response


def _codec_id(records: bytes | None) -> int:
    """The codec id in the first batch's attributes (0 for a request too short to carry one)."""
    if records is None or len(records) <= _ATTRIBUTES_LOW:
        return 0
    return records[_ATTRIBUTES_LOW] & COMPRESSION_MASK


def _unknown_codec_in_old_request(ctx: RequestContext, request: ProduceRequest) -> bool:
    """Produce v3-v6: Kafka reads each existing partition's codec before anything else, and a codec
    id it does not know (5-7) fails the whole request."""
    if ctx.version >= ZSTD_SINCE:
        return False
    for t in request.topic_data:
        for p in t.partition_data:
            if _codec_id(p.records) > MAX_CODEC_ID and ctx.topics.get(t.name) is not None:
                return True
    return False


def _fail_all(ctx: RequestContext, request: ProduceRequest, error: ErrorCode) -> Any:
    if request.acks == 0:
        return None
    topics = [
        dict(
            name=t.name,
            topic_id=t.topic_id,
            partition_responses=[_partition_response(p.index, error) for p in t.partition_data],
        )
        for t in request.topic_data
    ]
    return ctx.response(responses=topics, throttle_time_ms=0)


def _resolve_ids(ctx: RequestContext, request: ProduceRequest) -> None:
    """v13: name each topic after its id, in the decoded request itself, so that the rest of the
    handler reads names as in v0-v12; an id no topic has keeps the empty name (`_UNRESOLVED`)."""
    for t in request.topic_data:
        info = ctx.topics.get_by_id(t.topic_id) if t.topic_id is not None else None
        t.name = info.name if info is not None else _UNRESOLVED


def handle(ctx: RequestContext, request: ProduceRequest) -> Any:
    if ctx.version >= TOPIC_IDS_SINCE:
        _resolve_ids(ctx, request)
    if _unknown_codec_in_old_request(ctx, request):
        return _fail_all(ctx, request, ErrorCode.UNKNOWN_SERVER_ERROR)
    transactional_id = request.transactional_id
    if transactional_id is not None and ctx.version >= IMPLICIT_ADD_SINCE and request.acks in (-1, 0, 1):
        wanted = _to_add(ctx, request)
        if wanted:
            return _add_then_append(ctx, request, transactional_id, wanted)
    return _append_all(ctx, request, {})


def _append_legacy(plog: PartitionLog, records: bytes) -> AppendInfo:
    """Produce v0-v2: a v0/v1 message set is appended as one v2 batch (v2 batches as they are)."""
    return plog.append(to_v2(records) if is_legacy(records) else records)


class _Legacy:
    """Produce v0-v2: no transactional id; message sets converted on append."""

    API_KEY = API_KEY
    VERSIONS = (0, FIRST_V2_ONLY - 1)

    @staticmethod
    def handle(ctx: RequestContext, request: ProduceRequest) -> Any:
        return _append_all(ctx, request, {}, _append_legacy)


_LEGACY = _Legacy()


def handler_for_version(version: int) -> Any:
    """The handler of one version (dispatch asks once per version): v0-v2 convert message sets."""
    import sys

    return _LEGACY if version < FIRST_V2_ONLY else sys.modules[__name__]


def _append_all(
    ctx: RequestContext,
    request: ProduceRequest,
    decided: Decided,
    append: Callable[[PartitionLog, bytes], AppendInfo] = PartitionLog.append,
) -> Any:
    """Append every partition's records; `decided` holds the partitions already added (ADDED) or
    refused by the transaction coordinator."""
    get_log = ctx.topics.get_log
    acks = request.acks
    by_id = ctx.version >= TOPIC_IDS_SINCE
    topics: list[dict[str, Any]] = []
    for t in request.topic_data:
        name = t.name
        parts: list[dict[str, Any]] = []
        if by_id and name == _UNRESOLVED:
            parts = [_partition_response(p.index, ErrorCode.UNKNOWN_TOPIC_ID) for p in t.partition_data]
            topics.append(dict(topic_id=t.topic_id, partition_responses=parts))
            continue
        for p in t.partition_data:
            try:
                plog = get_log(name, p.index)
            except LogError as exc:
                parts.append(_partition_response(p.index, exc.code))
                continue
            refused = _refusal(ctx, request, name, p, decided)
            if refused is not None:
                parts.append(_partition_response(p.index, refused))
                continue
            try:
                info = append(plog, p.records or b"")
            except LogError as exc:
                parts.append(_failed_append(p.index, exc, plog.log_start_offset))
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
        topics.append(dict(name=name, topic_id=t.topic_id, partition_responses=parts))
    if acks == 0:
        return None
    return ctx.response(responses=topics, throttle_time_ms=0)


def _refusal(
    ctx: RequestContext, request: ProduceRequest, name: str, p: PartitionData, decided: Decided
) -> ErrorCode | None:
    """Why this partition's records are not appended, or None to append them (in Kafka's order: the
    request's records, then acks, the topic, the transaction)."""
    if FIRST_V2_ONLY <= ctx.version < ZSTD_SINCE and _codec_id(p.records) == ZSTD:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    if request.acks not in (-1, 0, 1):
        return ErrorCode.INVALID_REQUIRED_ACKS
    if name in INTERNAL_TOPICS:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if request.transactional_id is not None:
        fate = decided.get((name, p.index))
        if fate is ADDED:
            return None
        return fate if fate is not None else _verify(ctx, request.transactional_id, name, p)
    if _is_transactional(p.records):
        # Kafka: transactional records need the transactional id they are authorized by.
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    return None
