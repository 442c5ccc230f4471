"""The sans-io classic group coordinator (states, members, delayed join/sync/heartbeat, offsets)."""

from broker.coordinator.config import CoordinatorConfig
from broker.coordinator.coordinator import GroupCoordinator
from broker.coordinator.group import Group, GroupState
from broker.coordinator.member import Member
from broker.coordinator.results import (
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
from broker.coordinator.store import GroupStore, InMemoryGroupStore

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
