"""A share group and its members as its records say (KIP-932): epochs, subscriptions, the target
assignment and each member's current assignment, changed only by `replay`.

Share groups never revoke: a partition may be assigned to several members at once (records are
acquired one by one under locks, by S-DATA's share partitions), so a member moves straight to the
target assignment at the group's assignment epoch.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kafkito.broker.coordinator.share.records import (
    Assignment,
    ShareGroupCurrentAssignmentRecord,
    ShareGroupCurrentAssignmentTombstone,
    ShareGroupMemberRecord,
    ShareGroupMemberTombstone,
    ShareGroupMetadataRecord,
    ShareGroupRecord,
    ShareGroupStatePartitionMetadataRecord,
    ShareGroupStatePartitionMetadataTombstone,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupTargetAssignmentMetadataRecord,
)

STABLE_MEMBER_STATE = 0  # the only state a share group member has (Kafka's MemberState.STABLE)


class ShareGroupState(Enum):
    """As Kafka names them (ListGroups, ShareGroupDescribe)."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class ShareGroupMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = ()


@dataclass(slots=True)
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareGroupMember] = field(default_factory=dict)
    targets: dict[str, Assignment] = field(default_factory=dict)
    # Partitions the persister was told to initialize / has initialized, by topic id.
    initializing: dict[uuid.UUID, tuple[str, frozenset[int]]] = field(default_factory=dict)
    initialized: dict[uuid.UUID, tuple[str, frozenset[int]]] = field(default_factory=dict)
    deleting: dict[uuid.UUID, str] = field(default_factory=dict)
    dead: bool = False

    @property
    def state(self) -> ShareGroupState:
        if self.dead:
            return ShareGroupState.DEAD
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def subscribed_topic_names(self) -> frozenset[str]:
        return frozenset(name for m in self.members.values() for name in m.subscribed_topic_names)

    def replay(self, record: ShareGroupRecord) -> None:
        """Apply one record of this group (the group metadata tombstone is the caller's: it removes
        the group; the target metadata tombstone and Kafka 4.0's partition metadata change nothing)."""
        apply = _REPLAY.get(type(record))
        if apply is not None:
            apply(self, record)

    def _replay_metadata(self, record: ShareGroupMetadataRecord) -> None:
        self.group_epoch = record.epoch
        self.metadata_hash = record.metadata_hash

    def _replay_member(self, record: ShareGroupMemberRecord) -> None:
        member = self.members.get(record.member_id) or ShareGroupMember(record.member_id)
        member.rack_id = record.rack_id
        member.client_id = record.client_id
        member.client_host = record.client_host
        member.subscribed_topic_names = record.subscribed_topic_names
        self.members[record.member_id] = member

    def _replay_member_tombstone(self, record: ShareGroupMemberTombstone) -> None:
        self.members.pop(record.member_id, None)

    def _replay_target_metadata(self, record: ShareGroupTargetAssignmentMetadataRecord) -> None:
        self.assignment_epoch = record.assignment_epoch

    def _replay_target(self, record: ShareGroupTargetAssignmentMemberRecord) -> None:
        self.targets[record.member_id] = record.assignment

    def _replay_target_tombstone(self, record: ShareGroupTargetAssignmentMemberTombstone) -> None:
        self.targets.pop(record.member_id, None)

    def _replay_current_tombstone(self, record: ShareGroupCurrentAssignmentTombstone) -> None:
        member = self.members.get(record.member_id)
        if member is not None:
            member.member_epoch, member.assigned = 0, ()

    def _replay_state(self, record: ShareGroupStatePartitionMetadataRecord) -> None:
        self.initializing = {t: (n, frozenset(p)) for t, n, p in record.initializing}
        self.initialized = {t: (n, frozenset(p)) for t, n, p in record.initialized}
        self.deleting = dict(record.deleting)

    def _replay_state_tombstone(self, _record: ShareGroupStatePartitionMetadataTombstone) -> None:
        self.initializing, self.initialized, self.deleting = {}, {}, {}

    def _replay_current(self, record: ShareGroupCurrentAssignmentRecord) -> None:
        member = self.members.get(record.member_id)
        if member is None:
            # Kafka writes the member record first; a current assignment alone still makes a member.
            member = self.members[record.member_id] = ShareGroupMember(record.member_id)
        member.member_epoch = record.member_epoch
        member.previous_member_epoch = record.previous_member_epoch
        member.assigned = record.assigned


_REPLAY: dict[type, Callable[[ShareGroup, Any], None]] = {
    ShareGroupMetadataRecord: ShareGroup._replay_metadata,
    ShareGroupMemberRecord: ShareGroup._replay_member,
    ShareGroupMemberTombstone: ShareGroup._replay_member_tombstone,
    ShareGroupTargetAssignmentMetadataRecord: ShareGroup._replay_target_metadata,
    ShareGroupTargetAssignmentMemberRecord: ShareGroup._replay_target,
    ShareGroupTargetAssignmentMemberTombstone: ShareGroup._replay_target_tombstone,
    ShareGroupCurrentAssignmentRecord: ShareGroup._replay_current,
    ShareGroupCurrentAssignmentTombstone: ShareGroup._replay_current_tombstone,
    ShareGroupStatePartitionMetadataRecord: ShareGroup._replay_state,
    ShareGroupStatePartitionMetadataTombstone: ShareGroup._replay_state_tombstone,
}
