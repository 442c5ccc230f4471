"""One member of a consumer group: its metadata (member record) and reconciliation state (current
assignment record). Changed only by `ConsumerGroup.replay`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafkito.broker.coordinator.consumer.records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupMemberRecord,
    to_assignment,
)
from kafkito.broker.coordinator.consumer.state import MemberState

PartitionMap = dict[uuid.UUID, frozenset[int]]


@dataclass(slots=True)
class ConsumerGroupMember:
    """A member as its records say; `member_epoch` -2 is a static member that left for a while."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    classic_member: ClassicMemberMetadata | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: PartitionMap = field(default_factory=dict)
    pending_revocation: PartitionMap = field(default_factory=dict)

    def metadata_record(self, group_id: str) -> ConsumerGroupMemberRecord:
        return ConsumerGroupMemberRecord(
            group_id,
            self.member_id,
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.rebalance_timeout_ms,
            self.server_assignor,
            self.classic_member,
        )

    def assignment_record(self, group_id: str) -> ConsumerGroupCurrentAssignmentRecord:
        return ConsumerGroupCurrentAssignmentRecord(
            group_id,
            self.member_id,
            self.member_epoch,
            self.previous_member_epoch,
            int(self.state),
            to_assignment(self.assigned),
            to_assignment(self.pending_revocation),
        )

    def apply_metadata(self, record: ConsumerGroupMemberRecord) -> None:
        self.instance_id = record.instance_id
        self.rack_id = record.rack_id
        self.client_id = record.client_id
        self.client_host = record.client_host
        self.subscribed_topic_names = record.subscribed_topic_names
        self.subscribed_topic_regex = record.subscribed_topic_regex
        self.rebalance_timeout_ms = record.rebalance_timeout_ms
        self.server_assignor = record.server_assignor
        self.classic_member = record.classic_member

    def owned_partitions(self) -> set[tuple[uuid.UUID, int]]:
        """Every partition this member may still hold: assigned and pending revocation."""
        owned = {(t, p) for t, parts in self.assigned.items() for p in parts}
        owned.update((t, p) for t, parts in self.pending_revocation.items() for p in parts)
        return owned
