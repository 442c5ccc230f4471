"""The sans-io group coordinator: classic groups (states, members, delayed operations) and offsets."""

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.member import Member
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.coordinator import GroupCoordinator
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    CoordinatorResult,
    GroupMetadataRecord,
    GroupTombstone,
    MemberMetadata,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.requests import (
    JoinGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
)
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
from kafkito.broker.coordinator.sink import InMemoryRecordSink, RecordSink

__all__ = [
    "ClassicGroup",
    "CoordinatorConfig",
    "CoordinatorRecord",
    "CoordinatorResult",
    "DescribedGroup",
    "GroupCoordinator",
    "GroupMetadataRecord",
    "GroupOverview",
    "GroupState",
    "GroupSummary",
    "GroupTombstone",
    "InMemoryRecordSink",
    "JoinGroupMember",
    "JoinGroupRequest",
    "JoinGroupResult",
    "LeaveGroupResult",
    "LeaveMemberResult",
    "LeavingMember",
    "Member",
    "MemberMetadata",
    "MemberSummary",
    "OffsetAndMetadata",
    "OffsetCommitRecord",
    "OffsetCommitRequest",
    "OffsetTombstone",
    "PartitionOffset",
    "RecordSink",
    "SyncGroupRequest",
    "SyncGroupResult",
    "TopicPartition",
    "TransactionMarker",
    "TxnOffsetCommitRecord",
    "TxnOffsetCommitRequest",
]
