"""One member of a streams group: its metadata (member record) and its reconciliation state
(current assignment record). Changed only by `StreamsGroup.replay`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum

from kafkito.broker.coordinator.streams.records import (
    StreamsGroupCurrentAssignmentRecord,
    StreamsGroupMemberRecord,
)
from kafkito.broker.coordinator.streams.tasks import TaskSet

STATIC_LEFT_EPOCH = -2
"""The member epoch of a static member that left for a while (its tasks wait for its return)."""


class MemberState(IntEnum):
    """A member's reconciliation state; the value is Kafka's byte in the current assignment record."""

    STABLE = 0
    UNREVOKED_TASKS = 1
    """The member must first revoke `pending_revocation`; it keeps its epoch until it reports it has."""
    UNRELEASED_TASKS = 2
    """At the target epoch, but some target tasks are still held by another member."""
    UNKNOWN = 127

    @classmethod
    def of(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class StreamsGroupState(Enum):
    """Kafka's StreamsGroupState, by its name as DescribeGroups and ListGroups show it."""

    EMPTY = "Empty"
    NOT_READY = "NotReady"
    """Members, but no topology ready to assign (missing or mis-partitioned topics)."""
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class StreamsGroupMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: TaskSet = field(default_factory=TaskSet.empty)
    pending_revocation: TaskSet = field(default_factory=TaskSet.empty)

    def metadata_record(self, group_id: str) -> StreamsGroupMemberRecord:
        return StreamsGroupMemberRecord(
            group_id,
            self.member_id,
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.rebalance_timeout_ms,
            self.topology_epoch,
            self.process_id,
            self.user_endpoint,
            self.client_tags,
        )

    def assignment_record(self, group_id: str) -> StreamsGroupCurrentAssignmentRecord:
        return StreamsGroupCurrentAssignmentRecord(
            group_id,
            self.member_id,
            self.member_epoch,
            self.previous_member_epoch,
            int(self.state),
            *self.assigned.wire(),
            *self.pending_revocation.wire(),
        )

    def apply_metadata(self, record: StreamsGroupMemberRecord) -> None:
        self.instance_id = record.instance_id
        self.rack_id = record.rack_id
        self.client_id = record.client_id
        self.client_host = record.client_host
        self.rebalance_timeout_ms = record.rebalance_timeout_ms
        self.topology_epoch = record.topology_epoch
        self.process_id = record.process_id
        self.user_endpoint = record.user_endpoint
        self.client_tags = record.client_tags

    def apply_assignment(self, record: StreamsGroupCurrentAssignmentRecord) -> None:
        self.member_epoch = record.member_epoch
        self.previous_member_epoch = record.previous_member_epoch
        self.state = MemberState.of(record.state)
        self.assigned = TaskSet.of_wire(record.active, record.standby, record.warmup)
        self.pending_revocation = TaskSet.of_wire(
            record.active_pending_revocation,
            record.standby_pending_revocation,
            record.warmup_pending_revocation,
        )

    def owned(self) -> TaskSet:
        """What the member may still run: its assignment and what it has not revoked yet."""
        return self.assigned.merge(self.pending_revocation)
