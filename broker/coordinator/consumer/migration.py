"""Online migration between the group types (`group.consumer.migration.policy`), as Kafka 4 does it.

- Upgrade: a consumer-protocol member joining a classic group of the `consumer` protocol turns it
  into a consumer group (members parked in a rebalance are told REBALANCE_IN_PROGRESS). Each
  classic member becomes a classic member of the consumer group, keeping its assignment at the
  classic generation, which becomes the group epoch.
- Downgrade: when the last consumer-protocol member leaves (or is fenced) and only classic members
  remain, the group turns back into a classic group. It is written as a classic group record with
  the members' current assignments, and then it rebalances.
Both are records: the old type's tombstones and the new type's records, in one write.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from kafkito.broker.coordinator.consumer.classic_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.plan import member_tombstones
from kafkito.broker.coordinator.consumer.records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentAssignmentRecord,
    ConsumerGroupMemberRecord,
    ConsumerGroupMetadataRecord,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMetadataRecord,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    to_assignment,
)
from kafkito.broker.coordinator.consumer.state import MemberState
from kafkito.broker.coordinator.consumer.subscription import metadata_hash
from kafkito.broker.coordinator.consumer.topics import TopicsView
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    MemberMetadata,
)

if TYPE_CHECKING:
    from kafkito.broker.coordinator.config import CoordinatorConfig

UPGRADE_POLICIES = frozenset({"upgrade", "bidirectional"})
DOWNGRADE_POLICIES = frozenset({"downgrade", "bidirectional"})


def can_upgrade(classic: ClassicGroup, config: CoordinatorConfig) -> str | None:
    """Why the classic group cannot become a consumer group now (None: it can)."""
    if config.group_consumer_migration_policy.lower() not in UPGRADE_POLICIES:
        return "the online upgrade is disabled (group.consumer.migration.policy)"
    if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return f"it uses the protocol type {classic.protocol_type!r}, not 'consumer'"
    if classic.size >= config.group_consumer_max_size:
        return "it is at the consumer group maximum size"
    return None


def upgrade_records(classic: ClassicGroup, topics: TopicsView) -> list[CoordinatorRecord]:
    """The classic group's tombstone, then its consumer-group records at its generation."""
    gid = classic.group_id
    epoch = classic.generation_id
    protocol = classic.protocol_name
    members: list[CoordinatorRecord] = []
    targets: list[CoordinatorRecord] = []
    currents: list[CoordinatorRecord] = []
    names: set[str] = set()
    for m in classic.members():
        sub = decode_subscription(m.metadata(protocol)) if protocol is not None else None
        subscribed = sub.topics if sub is not None else ()
        names.update(subscribed)
        classic_meta = ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols))
        members.append(
            ConsumerGroupMemberRecord(
                gid, m.member_id, m.group_instance_id, sub.rack_id if sub else None, m.client_id,
                m.client_host, subscribed, None, m.rebalance_timeout_ms, None, classic_meta,
            )
        )  # fmt: skip
        assigned = to_assignment(_by_id(decode_assignment(m.assignment) or {}, topics))
        targets.append(ConsumerGroupTargetAssignmentMemberRecord(gid, m.member_id, assigned))
        currents.append(
            ConsumerGroupCurrentAssignmentRecord(
                gid, m.member_id, epoch, epoch - 1, int(MemberState.STABLE), assigned, ()
            )
        )
    return [
        GroupTombstone(gid),
        *members,
        ConsumerGroupMetadataRecord(gid, epoch, metadata_hash(names, topics)),
        *targets,
        ConsumerGroupTargetAssignmentMetadataRecord(gid, epoch),
        *currents,
    ]


def _by_id(partitions: dict[str, tuple[int, ...]], topics: TopicsView) -> dict[uuid.UUID, frozenset[int]]:
    out: dict[uuid.UUID, frozenset[int]] = {}
    for name, parts in partitions.items():
        info = topics.by_name(name)
        if info is not None:
            out[info.topic_id] = frozenset(p for p in parts if 0 <= p < info.num_partitions)
    return out


def downgrade_needed(group: ConsumerGroup, leaving: str, config: CoordinatorConfig) -> bool:
    """Whether removing `leaving` leaves only classic members (at least one), and the policy and the
    classic group size allow turning the group back into a classic group."""
    if config.group_consumer_migration_policy.lower() not in DOWNGRADE_POLICIES:
        return False
    rest = [m for mid, m in group.members.items() if mid != leaving]
    if not rest or any(m.classic_member is None for m in rest):
        return False
    return len(rest) <= config.group_max_size and _common_protocol(group, leaving) is not None


def _common_protocol(group: ConsumerGroup, leaving: str) -> str | None:
    rest = [m.classic_member for mid, m in group.members.items() if mid != leaving]
    if not rest or rest[0] is None:
        return None
    for name, _ in rest[0].supported_protocols:
        if all(c is not None and any(n == name for n, _ in c.supported_protocols) for c in rest):
            return name
    return None


def downgrade_records(group: ConsumerGroup, leaving: str, topics: TopicsView) -> list[CoordinatorRecord]:
    """Every consumer-group record's tombstone, then the classic group record of the members left."""
    gid = group.group_id
    protocol = _common_protocol(group, leaving)
    assert protocol is not None
    records: list[CoordinatorRecord] = []
    for member_id in group.members:
        records += member_tombstones(gid, member_id)
    records += [ConsumerGroupRegexTombstone(gid, regex) for regex in sorted(group.regexes)]
    records += [ConsumerGroupTargetAssignmentMetadataTombstone(gid), ConsumerGroupMetadataTombstone(gid)]
    members = []
    for member_id, m in group.members.items():
        if member_id == leaving or m.classic_member is None:
            continue
        metadata = dict(m.classic_member.supported_protocols)[protocol]
        assignment: dict[str, tuple[int, ...]] = {}
        for topic_id, parts in m.assigned.items():
            info = topics.by_id(topic_id)
            if info is not None:
                assignment[info.name] = tuple(sorted(parts))
        members.append(
            MemberMetadata(
                member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                m.classic_member.session_timeout_ms, metadata, encode_assignment(assignment),
            )
        )  # fmt: skip
    records.append(
        GroupMetadataRecord(
            gid, CONSUMER_PROTOCOL_TYPE, group.group_epoch, protocol, members[0].member_id, tuple(members)
        )
    )
    return records
