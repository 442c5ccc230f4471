"""Typed records of share groups in `__consumer_offsets` (Kafka's record types 9-15), on the
coordinator's clock.

A share group changes only by replaying these records (as Kafka's coordinator does), so a restart is a
replay by construction. An assignment is `tuple[tuple[UUID, tuple[int, ...]], ...]`, sorted by topic
id bytes then partition (hashable, and the order written to the log). A tombstone is its own
NamedTuple with the key fields only. Type 9 (Kafka 4.0's subscribed-topic metadata) is read and
dropped: kafkito keeps the metadata hash of the group record instead, as Kafka 4.1 does.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple, TypeAlias

Assignment: TypeAlias = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]


class ShareGroupMetadataRecord(NamedTuple):
    """Type 11: the group epoch and the subscribed topics' metadata hash."""

    group_id: str
    epoch: int
    metadata_hash: int


class ShareGroupPartitionMetadataRecord(NamedTuple):
    """Type 9 (Kafka 4.0): the subscribed topics' ids, names and partition counts; read, not kept."""

    group_id: str
    topics: tuple[tuple[uuid.UUID, str, int], ...]


class ShareGroupMemberRecord(NamedTuple):
    """Type 10: a member's identity and subscription."""

    group_id: str
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]


class ShareGroupTargetAssignmentMetadataRecord(NamedTuple):
    """Type 12: the epoch of the group's target assignment."""

    group_id: str
    assignment_epoch: int


class ShareGroupTargetAssignmentMemberRecord(NamedTuple):
    """Type 13: one member's target assignment."""

    group_id: str
    member_id: str
    assignment: Assignment


class ShareGroupCurrentAssignmentRecord(NamedTuple):
    """Type 14: a member's epochs, state (always stable: nothing is revoked) and assigned partitions."""

    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: Assignment


class ShareGroupStatePartitionMetadataRecord(NamedTuple):
    """Type 15: which partitions of the group's topics the share-state persister was told about:
    being initialized, initialized, and topics being deleted. Topics are (id, name, partitions)."""

    group_id: str
    initializing: tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]
    initialized: tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]
    deleting: tuple[tuple[uuid.UUID, str], ...]


class ShareGroupMetadataTombstone(NamedTuple):
    group_id: str
    # A field the consumer group tombstones lack, so equal group ids never make equal tombstones.
    kind: str = "share"


class ShareGroupPartitionMetadataTombstone(NamedTuple):
    group_id: str
    kind: str = "share-partition-metadata"


class ShareGroupMemberTombstone(NamedTuple):
    group_id: str
    member_id: str
    kind: str = "share-member"


class ShareGroupTargetAssignmentMetadataTombstone(NamedTuple):
    group_id: str
    kind: str = "share-target-metadata"


class ShareGroupTargetAssignmentMemberTombstone(NamedTuple):
    group_id: str
    member_id: str
    kind: str = "share-target-member"


class ShareGroupCurrentAssignmentTombstone(NamedTuple):
    group_id: str
    member_id: str
    kind: str = "share-current-assignment"


class ShareGroupStatePartitionMetadataTombstone(NamedTuple):
    group_id: str
    kind: str = "share-state-partition-metadata"


ShareGroupRecord: TypeAlias = (
    ShareGroupMetadataRecord
    | ShareGroupPartitionMetadataRecord
    | ShareGroupMemberRecord
    | ShareGroupTargetAssignmentMetadataRecord
    | ShareGroupTargetAssignmentMemberRecord
    | ShareGroupCurrentAssignmentRecord
    | ShareGroupStatePartitionMetadataRecord
    | ShareGroupMetadataTombstone
    | ShareGroupPartitionMetadataTombstone
    | ShareGroupMemberTombstone
    | ShareGroupTargetAssignmentMetadataTombstone
    | ShareGroupTargetAssignmentMemberTombstone
    | ShareGroupCurrentAssignmentTombstone
    | ShareGroupStatePartitionMetadataTombstone
)

SHARE_GROUP_RECORD_TYPES = (
    ShareGroupMetadataRecord,
    ShareGroupPartitionMetadataRecord,
    ShareGroupMemberRecord,
    ShareGroupTargetAssignmentMetadataRecord,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupCurrentAssignmentRecord,
    ShareGroupStatePartitionMetadataRecord,
    ShareGroupMetadataTombstone,
    ShareGroupPartitionMetadataTombstone,
    ShareGroupMemberTombstone,
    ShareGroupTargetAssignmentMetadataTombstone,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupCurrentAssignmentTombstone,
    ShareGroupStatePartitionMetadataTombstone,
)


def is_share_group_record(record: object) -> bool:
    return isinstance(record, SHARE_GROUP_RECORD_TYPES)
