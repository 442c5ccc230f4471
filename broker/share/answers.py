"""What the ShareFetch and ShareAcknowledge handlers share: reading a request's acknowledgements,
applying them, and the partition entries of their answers."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.share.manager import ShareManager
from kafkito.protocol.errors import ErrorCode

PartitionKey = tuple[uuid.UUID, int]


class AckBatchField(Protocol):
    first_offset: int
    last_offset: int
    acknowledge_types: Sequence[int]


class AckPartitionField(Protocol):
    partition_index: int
    acknowledgement_batches: Sequence[AckBatchField]


class AckTopicField(Protocol):
    topic_id: uuid.UUID
    partitions: Sequence[AckPartitionField]


def has_acks(topics: Sequence[AckTopicField]) -> bool:
    return any(p.acknowledgement_batches for t in topics for p in t.partitions)


def apply_acks(
    manager: ShareManager, group_id: str, member_id: str, topics: Sequence[AckTopicField], renew: bool
) -> dict[PartitionKey, ErrorCode]:
    """Each partition's acknowledgements applied (all or none per partition); its error code."""
    out: dict[PartitionKey, ErrorCode] = {}
    for t in topics:
        for p in t.partitions:
            if not p.acknowledgement_batches:
                continue
            batches = [
                (b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches
            ]
            if manager.logs.topic_by_id(t.topic_id) is None:
                out[t.topic_id, p.partition_index] = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            error = manager.acknowledge(group_id, member_id, t.topic_id, p.partition_index, batches, renew)
            out[t.topic_id, p.partition_index] = error
    return out


def by_topic(entries: list[tuple[uuid.UUID, dict[str, Any]]]) -> list[dict[str, Any]]:
    """[(topic id, partition entry)] -> the responses array, topics in first-seen order."""
    topics: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for topic_id, entry in entries:
        topics.setdefault(topic_id, []).append(entry)
    return [{"topic_id": t, "partitions": parts} for t, parts in topics.items()]


def error_message(error: ErrorCode) -> str | None:
    if error is ErrorCode.NONE:
        return None
    if error is ErrorCode.INVALID_RECORD_STATE:
        return "The record state is invalid. The acknowledgement of delivery could not be completed."
    return error.name
