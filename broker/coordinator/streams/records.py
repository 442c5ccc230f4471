"""The streams group records of `__consumer_offsets`, typed (Kafka 4.4's StreamsGroup*Key/Value).

Record types, as Kafka numbers them: group metadata 17, member metadata 19, target assignment
metadata 20, target assignment member 21, current member assignment 22, topology 23; each has a
tombstone (its key with no value). The log shell encodes them (`broker.offsets.streams_records`).
Tombstones are distinct classes: NamedTuples of equal fields compare equal, so the code always
dispatches on the type.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias

from kafkito.broker.coordinator.streams.tasks import WireTasks
from kafkito.broker.coordinator.streams.topology import StreamsTopology

METADATA_TYPE = 17
MEMBER_TYPE = 19
TARGET_METADATA_TYPE = 20
TARGET_MEMBER_TYPE = 21
CURRENT_ASSIGNMENT_TYPE = 22
TOPOLOGY_TYPE = 23


class StreamsGroupMetadataRecord(NamedTuple):
    group_id: str
    epoch: int
    metadata_hash: int
    validated_topology_epoch: int
    last_assignment_configs: tuple[tuple[str, str], ...] = ()


class StreamsGroupMetadataTombstone(NamedTuple):
    group_id: str


class StreamsGroupTopologyRecord(NamedTuple):
    group_id: str
    topology: StreamsTopology


class StreamsGroupTopologyTombstone(NamedTuple):
    group_id: str


class StreamsGroupMemberRecord(NamedTuple):
    group_id: str
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None
    client_tags: tuple[tuple[str, str], ...]


class StreamsGroupMemberTombstone(NamedTuple):
    group_id: str
    member_id: str


class StreamsGroupTargetAssignmentMetadataRecord(NamedTuple):
    group_id: str
    assignment_epoch: int
    assignment_timestamp_ms: int = 0  # broker time the target was computed (tag 0); 0: when written


class StreamsGroupTargetAssignmentMetadataTombstone(NamedTuple):
    group_id: str


class StreamsGroupTargetAssignmentMemberRecord(NamedTuple):
    group_id: str
    member_id: str
    active: WireTasks
    standby: WireTasks
    warmup: WireTasks


class StreamsGroupTargetAssignmentMemberTombstone(NamedTuple):
    group_id: str
    member_id: str


class StreamsGroupCurrentAssignmentRecord(NamedTuple):
    group_id: str
    member_id: str
    member_epoch: int
    previous_member_epoch: int
    state: int
    active: WireTasks
    standby: WireTasks
    warmup: WireTasks
    active_pending_revocation: WireTasks
    standby_pending_revocation: WireTasks
    warmup_pending_revocation: WireTasks


class StreamsGroupCurrentAssignmentTombstone(NamedTuple):
    group_id: str
    member_id: str


StreamsGroupRecord: TypeAlias = (
    StreamsGroupMetadataRecord
    | StreamsGroupMetadataTombstone
    | StreamsGroupTopologyRecord
    | StreamsGroupTopologyTombstone
    | StreamsGroupMemberRecord
    | StreamsGroupMemberTombstone
    | StreamsGroupTargetAssignmentMetadataRecord
    | StreamsGroupTargetAssignmentMetadataTombstone
    | StreamsGroupTargetAssignmentMemberRecord
    | StreamsGroupTargetAssignmentMemberTombstone
    | StreamsGroupCurrentAssignmentRecord
    | StreamsGroupCurrentAssignmentTombstone
)

STREAMS_GROUP_RECORD_TYPES = (
    StreamsGroupMetadataRecord,
    StreamsGroupMetadataTombstone,
    StreamsGroupTopologyRecord,
    StreamsGroupTopologyTombstone,
    StreamsGroupMemberRecord,
    StreamsGroupMemberTombstone,
    StreamsGroupTargetAssignmentMetadataRecord,
    StreamsGroupTargetAssignmentMetadataTombstone,
    StreamsGroupTargetAssignmentMemberRecord,
    StreamsGroupTargetAssignmentMemberTombstone,
    StreamsGroupCurrentAssignmentRecord,
    StreamsGroupCurrentAssignmentTombstone,
)


def is_streams_group_record(record: object) -> bool:
    """Whether `record` is one of this module's (checked by module, so the caller imports nothing)."""
    return type(record).__module__ == __name__
