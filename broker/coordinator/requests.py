"""The typed requests group handlers hand the coordinator (already decoded and version-defaulted).

NamedTuples, not frozen dataclasses: the broker imports them at every start (see results.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

Protocols = Sequence[tuple[str, bytes]]


class JoinGroupRequest(NamedTuple):
    """JoinGroup of version `api_version` (v0 uses the session timeout as rebalance timeout)."""

    group_id: str | None
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    api_version: int = 9
    reason: str | None = None


class SyncGroupRequest(NamedTuple):
    """SyncGroup; `protocol_type`/`protocol_name` are None before v5 (not checked)."""

    group_id: str | None
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: Mapping[str, bytes]


MEMBER_EPOCH_COMMIT_VERSION = 9
"""OffsetCommit v9 (KIP-848): new-protocol members commit with their epoch, and a commit naming a
generation of a group that does not exist is GROUP_ID_NOT_FOUND (ILLEGAL_GENERATION before)."""


class OffsetCommitRequest(NamedTuple):
    """OffsetCommit of one group: generation -1 for commits from outside the group (member "", or the
    id a KIP-848 consumer gave itself). `api_version` is the request's (the newest when not said)."""

    group_id: str | None
    member_id: str
    group_instance_id: str | None
    generation_id: int
    offsets: Mapping[TopicPartition, OffsetAndMetadata]
    api_version: int = MEMBER_EPOCH_COMMIT_VERSION


class TxnOffsetCommitRequest(NamedTuple):
    """TxnOffsetCommit of one group inside a producer's transaction. Before v3 the member is not
    named: member "" and generation -1, as Kafka defaults them."""

    group_id: str | None
    transactional_id: str
    producer_id: int
    producer_epoch: int
    member_id: str
    generation_id: int
    group_instance_id: str | None
    offsets: Mapping[TopicPartition, OffsetAndMetadata]
