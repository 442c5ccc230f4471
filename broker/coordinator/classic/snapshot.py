"""A classic group's durable snapshot: the group record written for it, and the group read back from one."""

from __future__ import annotations

from collections.abc import Mapping

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.member import Member
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.records import GroupMetadataRecord, MemberMetadata


def group_record(group: ClassicGroup, assignment: Mapping[str, bytes]) -> GroupMetadataRecord:
    """The group record of `group` as it stands, with the given assignment."""
    protocol = group.protocol_name
    members = tuple(
        MemberMetadata(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout_ms,
            m.session_timeout_ms,
            m.metadata(protocol) if protocol is not None else b"",
            assignment.get(m.member_id, b""),
        )
        for m in group.members()
    )
    return GroupMetadataRecord(
        group.group_id,
        group.protocol_type or "",
        group.generation_id,
        protocol,
        group.leader_id,
        members,
        group.state_timestamp_ms,
    )


def group_from_record(
    record: GroupMetadataRecord | None, group_id: str, now_ms: int, previous: ClassicGroup | None
) -> ClassicGroup:
    """A group as Kafka loads it: Stable with its members and assignments, or Empty without members.

    `record` None (a tombstone) gives a bare Empty group. Offsets already replayed onto `previous`
    (the same group id) carry over: they are records of their own.
    """
    if record is None or record.protocol_name is None or not record.members:
        group = ClassicGroup(group_id, now_ms, GroupState.EMPTY)
    else:
        group = ClassicGroup(group_id, now_ms, GroupState.STABLE)
        # The leader goes in first: a group's first member is its leader.
        for m in sorted(record.members, key=lambda m: m.member_id != record.leader_id):
            group.add(
                Member(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    record.protocol_type,
                    [(record.protocol_name, m.subscription)],
                    assignment=m.assignment,
                )
            )
    if record is not None:
        group.generation_id = record.generation_id
        group.protocol_type = record.protocol_type or None
        group.protocol_name = record.protocol_name if group.size else None
        group.state_timestamp_ms = record.state_timestamp_ms
        group.subscribed_topics = group.compute_subscribed_topics()
    if previous is not None:
        group.offsets.update(previous.offsets)
    return group
