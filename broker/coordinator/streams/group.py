"""One streams group, as its records say: epochs, topology, members, target and current assignments.

`replay(record)` is the only mutator; the state is derived, and so are the owner indexes (which
member runs an active task, which members hold a standby or warm-up of it). The configured topology
(checked against the cluster) is a cache, recomputed when the topics' metadata hash changes.
Committed offsets live here too, as on the other group types.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from kafkito.broker.coordinator.requests import MEMBER_EPOCH_COMMIT_VERSION
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition
from kafkito.broker.coordinator.streams.internal_topics import ConfiguredTopology
from kafkito.broker.coordinator.streams.member import (
    StreamsGroupMember,
    StreamsGroupState,
)
from kafkito.broker.coordinator.streams.records import (
    StreamsGroupCurrentAssignmentRecord,
    StreamsGroupCurrentAssignmentTombstone,
    StreamsGroupMemberRecord,
    StreamsGroupMemberTombstone,
    StreamsGroupMetadataRecord,
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMemberRecord,
    StreamsGroupTargetAssignmentMemberTombstone,
    StreamsGroupTargetAssignmentMetadataRecord,
    StreamsGroupTopologyRecord,
    StreamsGroupTopologyTombstone,
)
from kafkito.broker.coordinator.streams.tasks import Task, TaskSet, each
from kafkito.broker.coordinator.streams.topology import StreamsTopology
from kafkito.protocol.errors import ErrorCode


class StreamsGroup:
    """A KIP-1071 streams group; `replay` is its only mutator (besides offsets)."""

    __slots__ = (
        "active_owners",
        "assignment_epoch",
        "assignment_timestamp_ms",
        "configured",
        "dead",
        "endpoint_information_epoch",
        "group_epoch",
        "group_id",
        "last_assignment_configs",
        "members",
        "metadata_hash",
        "offsets",
        "pending_offset_commits",
        "replica_holders",
        "shutdown_requested_by",
        "static_members",
        "target",
        "topology",
        "validated_topology_epoch",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        # Kafka's streams groups start at epoch 1: a new group's first bump makes it 2.
        self.group_epoch = 1
        self.metadata_hash = 0
        self.validated_topology_epoch = -1
        self.last_assignment_configs: tuple[tuple[str, str], ...] = ()
        self.assignment_epoch = 0
        self.assignment_timestamp_ms = 0  # broker time the target was last computed; 0: never
        self.dead = False
        self.topology: StreamsTopology | None = None
        self.configured: ConfiguredTopology | None = None
        self.members: dict[str, StreamsGroupMember] = {}
        self.target: dict[str, TaskSet] = {}
        self.static_members: dict[str, str] = {}
        # task -> member id running it as active (or still revoking it)
        self.active_owners: dict[Task, str] = {}
        # task -> member ids holding it as standby or warm-up
        self.replica_holders: dict[Task, set[str]] = defaultdict(set)
        self.endpoint_information_epoch = 0
        self.shutdown_requested_by: str | None = None
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return (
            f"StreamsGroup({self.group_id!r}, {self.state.value}, epoch={self.group_epoch}, "
            f"assignment_epoch={self.assignment_epoch}, members={sorted(self.members)})"
        )

    # -- derived state --------------------------------------------------------------------------

    @property
    def state(self) -> StreamsGroupState:
        if self.dead:
            return StreamsGroupState.DEAD
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.configured is None or not self.configured.is_ready or self.topology is None:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        for member in self.members.values():
            if member.member_epoch != self.assignment_epoch or member.state.value != 0:
                return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def is_empty(self) -> bool:
        return not self.members

    def active_owner(self, task: Task) -> str | None:
        return self.active_owners.get(task)

    def processes_holding_replica(self, task: Task) -> set[str]:
        return {self.members[m].process_id for m in self.replica_holders.get(task, ()) if m in self.members}

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: StreamsGroupRecord) -> None:
        """Apply one record; the group metadata tombstone is the caller's."""
        apply = _REPLAY.get(type(record))
        if apply is not None:
            apply(self, record)

    def _replay_metadata(self, record: StreamsGroupMetadataRecord) -> None:
        self.group_epoch = record.epoch
        self.metadata_hash = record.metadata_hash
        self.validated_topology_epoch = record.validated_topology_epoch
        self.last_assignment_configs = record.last_assignment_configs

    def _replay_topology(self, record: StreamsGroupTopologyRecord) -> None:
        if self.topology != record.topology:
            self.configured = None
        self.topology = record.topology

    def _replay_topology_tombstone(self, _record: StreamsGroupTopologyTombstone) -> None:
        self.topology = None
        self.configured = None

    def _replay_member(self, record: StreamsGroupMemberRecord) -> None:
        member = self.members.get(record.member_id)
        if member is None:
            member = self.members[record.member_id] = StreamsGroupMember(record.member_id)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]
        member.apply_metadata(record)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def _replay_member_tombstone(self, record: StreamsGroupMemberTombstone) -> None:
        member = self.members.pop(record.member_id, None)
        if member is None:
            return
        self._release(member)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]
        if self.shutdown_requested_by == member.member_id:
            self.shutdown_requested_by = None

    def _replay_target_metadata(self, record: StreamsGroupTargetAssignmentMetadataRecord) -> None:
        self.assignment_epoch = record.assignment_epoch
        self.assignment_timestamp_ms = record.assignment_timestamp_ms

    def _replay_target(self, record: StreamsGroupTargetAssignmentMemberRecord) -> None:
        self.target[record.member_id] = TaskSet.of_wire(record.active, record.standby, record.warmup)

    def _replay_target_tombstone(self, record: StreamsGroupTargetAssignmentMemberTombstone) -> None:
        self.target.pop(record.member_id, None)

    def _replay_current(self, record: StreamsGroupCurrentAssignmentRecord) -> None:
        member = self.members.get(record.member_id)
        if member is None:
            member = self.members[record.member_id] = StreamsGroupMember(record.member_id)
        self._release(member)
        member.apply_assignment(record)
        owned = member.owned()
        for task in each(owned.active):
            self.active_owners[task] = member.member_id
        for task in (*each(owned.standby), *each(owned.warmup)):
            self.replica_holders[task].add(member.member_id)

    def _replay_current_tombstone(self, record: StreamsGroupCurrentAssignmentTombstone) -> None:
        member = self.members.get(record.member_id)
        if member is not None:
            self._release(member)
            member.assigned, member.pending_revocation = TaskSet.empty(), TaskSet.empty()
            member.member_epoch, member.previous_member_epoch = 0, -1

    def _release(self, member: StreamsGroupMember) -> None:
        owned = member.owned()
        for task in each(owned.active):
            if self.active_owners.get(task) == member.member_id:
                del self.active_owners[task]
        for task in (*each(owned.standby), *each(owned.warmup)):
            holders = self.replica_holders.get(task)
            if holders is not None:
                holders.discard(member.member_id)
                if not holders:
                    del self.replica_holders[task]

    # -- offsets (the interface offset_manager uses on every group type) ------------------------

    def validate_offset_commit(
        self,
        member_id: str,
        instance_id: str | None,
        member_epoch: int,
        transactional: bool = False,
        api_version: int = MEMBER_EPOCH_COMMIT_VERSION,
    ) -> ErrorCode | None:
        """Kafka's StreamsGroup.validateOffsetCommit: from outside the group only while it is empty;
        a member must be known, commit with OffsetCommit v9+ (UNSUPPORTED_VERSION below, as KIP-1071's
        members use epochs) and be at its epoch (STALE_MEMBER_EPOCH)."""
        if member_epoch < 0 and not self.members:
            return None
        if transactional and member_epoch == -1 and member_id == "" and instance_id is None:
            return None
        member = self.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and api_version < MEMBER_EPOCH_COMMIT_VERSION:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return None

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        if member_id is None and member_epoch < 0:
            return None
        member = self.members.get(member_id) if member_id is not None else None
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return None

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Kafka's StreamsGroup.isSubscribedToTopic: a source or repartition source topic of the
        topology, unless the group is empty (its offsets may then be deleted and expire)."""
        if self.topology is None or not self.members or self.dead:
            return False
        return any(topic in s.input_topics() for s in self.topology.subtopologies)

    def has_pending_offset_commit(self, tp: TopicPartition) -> bool:
        return tp in self.pending_offset_commits

    def prepare_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.pending_offset_commits.update(offsets)

    def fail_offset_commit(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        if self.pending_offset_commits.get(tp) == offset:
            del self.pending_offset_commits[tp]


_REPLAY: dict[type, Callable[[StreamsGroup, Any], None]] = {
    StreamsGroupMetadataRecord: StreamsGroup._replay_metadata,
    StreamsGroupTopologyRecord: StreamsGroup._replay_topology,
    StreamsGroupTopologyTombstone: StreamsGroup._replay_topology_tombstone,
    StreamsGroupMemberRecord: StreamsGroup._replay_member,
    StreamsGroupMemberTombstone: StreamsGroup._replay_member_tombstone,
    StreamsGroupTargetAssignmentMetadataRecord: StreamsGroup._replay_target_metadata,
    StreamsGroupTargetAssignmentMemberRecord: StreamsGroup._replay_target,
    StreamsGroupTargetAssignmentMemberTombstone: StreamsGroup._replay_target_tombstone,
    StreamsGroupCurrentAssignmentRecord: StreamsGroup._replay_current,
    StreamsGroupCurrentAssignmentTombstone: StreamsGroup._replay_current_tombstone,
}
