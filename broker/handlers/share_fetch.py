"""ShareFetch (78): a share group member's fetch through its share session (KIP-932).

Epoch 0 opens the member's session (acknowledgements are not allowed in it), -1 applies the
acknowledgements and closes it (the member's acquired records go back), any other epoch must be the
session's next. The request adds partitions to the session and may forget some (their records held by
the member are released). Acknowledgements ride on the fetch. Records are acquired from every partition
of the session; when none are, or fewer bytes than `min_bytes` could be (counted before acquiring,
as Kafka does), and `max_wait_ms` allows, the fetch waits in the share-fetch purgatory.
The group's `share.isolation.level` says how far records may be acquired: the high watermark, or
the last stable offset without aborted transactions' records (read_committed); `max_bytes` is split
among the session's partitions as Kafka's does, and 0 gives no records.
v2 (Kafka 4.2): the acquire mode (record-limit cuts at `max_records`) and renew acknowledgements.
As Kafka 4.4: an empty member id is INVALID_REQUEST, the group id is not checked (an empty one is a
group like any other), and a request-level error carries no message (share groups being off keeps
its own).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.share_group_heartbeat import share_groups_off
from kafkito.broker.share.acquire import READ_COMMITTED, READ_UNCOMMITTED
from kafkito.broker.share.answers import (
    AckTopicField,
    PartitionKey,
    apply_acks,
    by_topic,
    error_message,
    has_acks,
)
from kafkito.broker.share.manager import FetchParams, PartitionFetchResult
from kafkito.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSession, ShareSessionError
from kafkito.protocol.errors import DEFAULT_MESSAGES, ErrorCode

API_KEY = 78
VERSIONS = (1, 2)


class ForgottenTopic(Protocol):
    topic_id: uuid.UUID
    partitions: Sequence[int]


class ShareFetchRequest(Protocol):
    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    topics: Sequence[AckTopicField]
    forgotten_topics_data: Sequence[ForgottenTopic]
    # v2: share_acquire_mode (int8), is_renew_ack (bool), read with getattr


def _failure(ctx: RequestContext, error: ErrorCode) -> Any:
    """A request-level error and nothing else: no message, but share groups being off's."""
    message = DEFAULT_MESSAGES[error] if error is ErrorCode.UNSUPPORTED_VERSION else None
    return ctx.response(
        throttle_time_ms=0, error_code=error, error_message=message, acquisition_lock_timeout_ms=0,
        responses=[], node_endpoints=[],
    )  # fmt: skip


def _refusal(ctx: RequestContext, request: ShareFetchRequest) -> ErrorCode | None:
    if not request.member_id:
        return ErrorCode.INVALID_REQUEST
    if share_groups_off(ctx):
        return ErrorCode.UNSUPPORTED_VERSION
    if request.share_session_epoch == INITIAL_EPOCH and has_acks(request.topics):
        return ErrorCode.INVALID_REQUEST  # acknowledgements in a fetch that opens the session
    return None


def handle(ctx: RequestContext, request: ShareFetchRequest) -> Any:
    refusal = _refusal(ctx, request)
    if refusal is not None:
        return _failure(ctx, refusal)
    group_id, member_id, epoch = request.group_id or "", request.member_id or "", request.share_session_epoch
    manager = ctx.share
    renew = bool(getattr(request, "is_renew_ack", False))
    try:
        if epoch == INITIAL_EPOCH:
            session, gone = manager.sessions.open(group_id, member_id)
            for old in gone:
                manager.release_session(old)
        else:
            session = manager.sessions.use(group_id, member_id, epoch)
    except ShareSessionError as exc:
        return _failure(ctx, exc.error)
    acks = apply_acks(manager, group_id, member_id, request.topics, renew)
    if epoch == FINAL_EPOCH:
        manager.release_session(session)
        manager.sessions.close(group_id, member_id)
        return _answer(ctx, group_id, [], acks, [])
    unknown = _update_session(ctx, session, request)
    wanted = list(session.partitions)
    params = FetchParams(
        max(request.max_records, 1),
        request.max_bytes,
        int(getattr(request, "share_acquire_mode", 0)),
        max(request.min_bytes, 1),
        READ_COMMITTED if ctx.groups.share_group_configs.read_committed(group_id) else READ_UNCOMMITTED,
    )
    if renew:  # a renewing fetch only extends locks (KIP-1222): it acquires nothing
        return _answer(ctx, group_id, [], acks, unknown)
    waits = request.max_wait_ms > 0 and bool(wanted)
    if not waits or manager.enough_bytes(group_id, wanted, params):
        results = manager.fetch_now(group_id, member_id, wanted, params)
        if not waits or any(r.ranges or r.error for r in results):
            return _answer(ctx, group_id, _shown(results, epoch, acks), acks, unknown)
    waiting = manager.park(group_id, member_id, wanted, params, request.max_wait_ms)
    return _later(ctx, group_id, waiting, acks, unknown)


async def _later(ctx: RequestContext, group_id: str, waiting: Any, acks: dict[PartitionKey, ErrorCode],
                 unknown: list[PartitionKey]) -> Any:  # fmt: skip
    results: list[PartitionFetchResult] = await waiting
    return _answer(ctx, group_id, [r for r in results if r.ranges or r.error], acks, unknown)


def _update_session(
    ctx: RequestContext, session: ShareSession, request: ShareFetchRequest
) -> list[PartitionKey]:
    """Add the request's partitions to the session and drop the forgotten ones; the unknown topics."""
    unknown: list[PartitionKey] = []
    topics = ctx.topics
    for t in request.topics:
        info = topics.get_by_id(t.topic_id)
        for p in t.partitions:
            key = (t.topic_id, p.partition_index)
            if info is None or not 0 <= p.partition_index < info.partitions:
                unknown.append(key)
                continue
            session.partitions[key] = None
    forgotten = [(f.topic_id, p) for f in request.forgotten_topics_data for p in f.partitions]
    for key in forgotten:
        session.partitions.pop(key, None)
    if forgotten:
        ctx.share.release_session(session, forgotten)
    return unknown


def _shown(
    results: list[PartitionFetchResult], epoch: int, acks: dict[PartitionKey, ErrorCode]
) -> list[PartitionFetchResult]:
    """A full (epoch 0) answer lists every session partition, an incremental one those with news."""
    if epoch == INITIAL_EPOCH:
        return results
    return [r for r in results if r.ranges or r.error or (r.topic_id, r.partition) in acks]


def _answer(
    ctx: RequestContext,
    group_id: str,
    results: list[PartitionFetchResult],
    acks: dict[PartitionKey, ErrorCode],
    unknown: list[PartitionKey],
) -> Any:
    leader = {"leader_id": ctx.cluster.node_id, "leader_epoch": 0}
    entries: list[tuple[uuid.UUID, dict[str, Any]]] = []
    listed: set[PartitionKey] = set()
    for r in results:
        ack = acks.get((r.topic_id, r.partition), ErrorCode.NONE)
        listed.add((r.topic_id, r.partition))
        entries.append(
            (r.topic_id, _entry(r.partition, r.error, r.message, ack, leader, r.records, r.ranges))
        )
    for key, ack in acks.items():
        if key not in listed:
            listed.add(key)
            entries.append((key[0], _entry(key[1], ErrorCode.NONE, None, ack, leader, b"", [])))
    for key in unknown:
        if key not in listed:
            entries.append(
                (key[0], _entry(key[1], ErrorCode.UNKNOWN_TOPIC_ID, None, ErrorCode.NONE, leader, b"", []))
            )
    lock_ms = ctx.share.lock_duration(group_id)
    return ctx.response(
        throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
        acquisition_lock_timeout_ms=lock_ms, responses=by_topic(entries), node_endpoints=[],
    )  # fmt: skip


def _entry(partition: int, error: ErrorCode, message: str | None, ack: ErrorCode, leader: dict[str, int],
           records: bytes, ranges: Sequence[tuple[int, int, int]]) -> dict[str, Any]:  # fmt: skip
    return {
        "partition_index": partition,
        "error_code": error,
        "error_message": message if error else None,
        "acknowledge_error_code": ack,
        "acknowledge_error_message": error_message(ack),
        "current_leader": leader,
        "records": records,
        "acquired_records": [
            {"first_offset": first, "last_offset": last, "delivery_count": count}
            for first, last, count in ranges
        ],
    }
