"""The sans-io classic group coordinator (states, members, delayed join/sync/heartbeat, offsets)."""

from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.coordinator import GroupCoordinator
from kafkito.broker.coordinator.group import Group, GroupState
from kafkito.broker.coordinator.member import Member
from kafkito.broker.coordinator.results import (
    DescribedGroup,
    GroupOverview,
    GroupSummary,
    JoinGroupMember,
    JoinGroupResult,
    LeaveGroupResult,
    LeaveMemberResult,
    LeavingMember,
    MemberSummary,
    OffsetAndMetadata,
    PartitionOffset,
    SyncGroupResult,
    TopicPartition,
)
from kafkito.broker.coordinator.store import GroupStore, InMemoryGroupStore

__all__ = [
    "CoordinatorConfig",
    "DescribedGroup",
    "Group",
    "GroupCoordinator",
    "GroupOverview",
    "GroupState",
    "GroupStore",
    "GroupSummary",
    "InMemoryGroupStore",
    "JoinGroupMember",
    "JoinGroupResult",
    "LeaveGroupResult",
    "LeaveMemberResult",
    "LeavingMember",
    "Member",
    "MemberSummary",
    "OffsetAndMetadata",
    "PartitionOffset",
    "SyncGroupResult",
    "TopicPartition",
]
