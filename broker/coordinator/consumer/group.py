"""One consumer group (KIP-848), as its records say: epochs, members, target assignment, owners.

Every field changes only through `replay(record)`, at load and at run time alike; the state is
derived (`state`), and so are the indexes kept for speed: partition owners with their epochs, static
members by instance id, subscribed topic name counts and regex counts. Committed offsets live here
too, as on a classic group (`offset_manager` works on both).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember, PartitionMap
from kafkito.broker.coordinator.consumer.records import (
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberRecord,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataRecord,
    from_assignment,
)
from kafkito.broker.coordinator.consumer.state import ConsumerGroupState, MemberState
from kafkito.broker.coordinator.requests import MEMBER_EPOCH_COMMIT_VERSION
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.protocol.errors import ErrorCode

STATIC_LEFT_EPOCH = -2


@dataclass(slots=True, frozen=True)
class ResolvedRegex:
    """A subscription regex and the topics it matched when resolved (at the topics `version`)."""

    topics: tuple[str, ...]
    version: int
    timestamp_ms: int


class ConsumerGroup:
    """A KIP-848 consumer group; `replay` is its only mutator (besides offsets, see offset_manager)."""

    __slots__ = (
        "assignment_epoch",
        "assignment_timestamp_ms",
        "dead",
        "group_epoch",
        "group_id",
        "members",
        "metadata_hash",
        "offsets",
        "owners",
        "pending_offset_commits",
        "regex_counts",
        "regexes",
        "static_members",
        "subscribed_names",
        "target",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        # Kafka's ModernGroup starts at epoch 1, so a new group's first bump makes it 2.
        self.group_epoch = 1
        self.metadata_hash = 0
        self.assignment_epoch = 0
        self.assignment_timestamp_ms = 0  # broker time the target was last computed; 0: never
        self.dead = False
        self.members: dict[str, ConsumerGroupMember] = {}
        self.target: dict[str, PartitionMap] = {}
        # (topic id, partition) -> (member id, that member's epoch): who may still hold it.
        self.owners: dict[tuple[uuid.UUID, int], tuple[str, int]] = {}
        self.static_members: dict[str, str] = {}
        self.subscribed_names: Counter[str] = Counter()
        self.regex_counts: Counter[str] = Counter()
        self.regexes: dict[str, ResolvedRegex] = {}
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return (
            f"ConsumerGroup({self.group_id!r}, {self.state.value}, epoch={self.group_epoch}, "
            f"assignment_epoch={self.assignment_epoch}, members={sorted(self.members)})"
        )

    # -- derived state --------------------------------------------------------------------------

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if member.member_epoch != self.assignment_epoch or member.state is not MemberState.STABLE:
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def is_empty(self) -> bool:
        return not self.members

    def partition_owner(self, topic_id: uuid.UUID, partition: int) -> str | None:
        owner = self.owners.get((topic_id, partition))
        return None if owner is None else owner[0]

    def subscribed_regexes(self) -> list[str]:
        return [regex for regex, count in self.regex_counts.items() if count > 0]

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_names.get(topic, 0) > 0:
            return True
        return any(topic in resolved.topics for resolved in self.regexes.values())

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: ConsumerGroupRecord) -> None:
        """Apply one record (tombstones included); the group metadata tombstone is the caller's.
        Kafka 4.0's partition metadata record is superseded by the metadata hash: ignored."""
        apply = _REPLAY.get(type(record))
        if apply is not None:
            apply(self, record)

    def _replay_metadata(self, record: ConsumerGroupMetadataRecord) -> None:
        self.group_epoch = record.epoch
        self.metadata_hash = record.metadata_hash

    def _replay_target_metadata(self, record: ConsumerGroupTargetAssignmentMetadataRecord) -> None:
        self.assignment_epoch = record.assignment_epoch
        self.assignment_timestamp_ms = record.assignment_timestamp_ms

    def _replay_target(self, record: ConsumerGroupTargetAssignmentMemberRecord) -> None:
        self.target[record.member_id] = from_assignment(record.assignment)

    def _replay_target_tombstone(self, record: ConsumerGroupTargetAssignmentMemberTombstone) -> None:
        self.target.pop(record.member_id, None)

    def _replay_current_tombstone(self, record: ConsumerGroupCurrentAssignmentTombstone) -> None:
        member = self.members.get(record.member_id)
        if member is not None:
            self._release(member)
            member.assigned, member.pending_revocation = {}, {}
            member.member_epoch, member.previous_member_epoch = 0, -1
            member.state = MemberState.STABLE

    def _replay_member_tombstone(self, record: ConsumerGroupMemberTombstone) -> None:
        self._remove_member(record.member_id)

    def _replay_regex(self, record: ConsumerGroupRegexRecord) -> None:
        self.regexes[record.regex] = ResolvedRegex(record.topics, record.version, record.timestamp_ms)

    def _replay_regex_tombstone(self, record: ConsumerGroupRegexTombstone) -> None:
        self.regexes.pop(record.regex, None)

    def _member(self, member_id: str) -> ConsumerGroupMember:
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = ConsumerGroupMember(member_id)
        return member

    def _replay_member(self, record: ConsumerGroupMemberRecord) -> None:
        member = self._member(record.member_id)
        self._unindex_subscription(member)
        member.apply_metadata(record)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        if member.subscribed_topic_names:
            self.subscribed_names.update(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            self.regex_counts[member.subscribed_topic_regex] += 1

    def _unindex_subscription(self, member: ConsumerGroupMember) -> None:
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]
        self.subscribed_names.subtract(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            self.regex_counts[member.subscribed_topic_regex] -= 1
        self.subscribed_names = +self.subscribed_names
        self.regex_counts = +self.regex_counts

    def _replay_current(self, record: ConsumerGroupCurrentAssignmentRecord) -> None:
        member = self._member(record.member_id)
        self._release(member)
        member.member_epoch = record.member_epoch
        member.previous_member_epoch = record.previous_member_epoch
        member.state = MemberState.of(record.state)
        member.assigned = from_assignment(record.assigned)
        member.pending_revocation = from_assignment(record.pending_revocation)
        for tp in member.owned_partitions():
            self.owners[tp] = (member.member_id, member.member_epoch)

    def _release(self, member: ConsumerGroupMember) -> None:
        for tp in member.owned_partitions():
            if self.owners.get(tp, ("",))[0] == member.member_id:
                del self.owners[tp]

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is None:
            return
        self._release(member)
        self._unindex_subscription(member)

    # -- offsets (the interface offset_manager uses on every group type) ------------------------

    def validate_offset_commit(
        self,
        member_id: str,
        instance_id: str | None,
        member_epoch: int,
        transactional: bool = False,
        api_version: int = MEMBER_EPOCH_COMMIT_VERSION,
    ) -> ErrorCode | None:
        """Kafka's ConsumerGroup.validateOffsetCommit: a commit from outside the group (epoch -1) is
        allowed only while the group has no members, and so is a TxnOffsetCommit naming nobody (no
        member id, generation or instance id); a member must be known and at its epoch. A member of the
        new protocol commits with OffsetCommit v9+ (UNSUPPORTED_VERSION below)."""
        if member_epoch < 0 and not self.members:
            return None
        if transactional and member_epoch == -1 and member_id == "" and instance_id is None:
            return None
        member = self.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        classic = member.classic_member is not None
        if not transactional and not classic and api_version < MEMBER_EPOCH_COMMIT_VERSION:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            # A classic member knows generations, not epochs (and so does a transactional commit).
            return ErrorCode.ILLEGAL_GENERATION if classic or transactional else ErrorCode.STALE_MEMBER_EPOCH
        return None

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """Kafka's ConsumerGroup.validateOffsetFetch: no member id and epoch -1 (admin clients, older
        versions) fetches freely; a named member must be known and at its epoch."""
        if member_id is None and member_epoch < 0:
            return None
        member = self.members.get(member_id) if member_id is not None else None
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            classic = member.classic_member is not None
            return ErrorCode.ILLEGAL_GENERATION if classic else ErrorCode.STALE_MEMBER_EPOCH
        return None

    def has_pending_offset_commit(self, tp: TopicPartition) -> bool:
        return tp in self.pending_offset_commits

    def prepare_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.pending_offset_commits.update(offsets)

    def fail_offset_commit(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        if self.pending_offset_commits.get(tp) == offset:
            del self.pending_offset_commits[tp]


_REPLAY: dict[type, Callable[[ConsumerGroup, Any], None]] = {
    ConsumerGroupMetadataRecord: ConsumerGroup._replay_metadata,
    ConsumerGroupMemberRecord: ConsumerGroup._replay_member,
    ConsumerGroupTargetAssignmentMetadataRecord: ConsumerGroup._replay_target_metadata,
    ConsumerGroupTargetAssignmentMemberRecord: ConsumerGroup._replay_target,
    ConsumerGroupTargetAssignmentMemberTombstone: ConsumerGroup._replay_target_tombstone,
    ConsumerGroupCurrentAssignmentRecord: ConsumerGroup._replay_current,
    ConsumerGroupCurrentAssignmentTombstone: ConsumerGroup._replay_current_tombstone,
    ConsumerGroupMemberTombstone: ConsumerGroup._replay_member_tombstone,
    ConsumerGroupRegexRecord: ConsumerGroup._replay_regex,
    ConsumerGroupRegexTombstone: ConsumerGroup._replay_regex_tombstone,
}
