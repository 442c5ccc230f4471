"""Classic members inside a consumer group (Kafka's classicGroupJoinToConsumerGroup and friends):
JoinGroup, SyncGroup, Heartbeat and LeaveGroup of a `consumer`-protocol client in a KIP-848 group.

The member's JoinGroup is handled as a heartbeat: its subscription (and the partitions it still
owns) come from its protocol metadata, the server assignor computes its assignment, and the answer
makes it a follower (no leader runs a client-side assignor). SyncGroup hands it its current
assignment. Its heartbeat answers REBALANCE_IN_PROGRESS until it is reconciled to the group epoch,
so it rejoins for every change, as a classic client expects.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

import structlog

from kafkito.broker.coordinator.consumer.classic_protocol import decode_subscription, encode_assignment
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.groups import ConsumerGroups
from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember
from kafkito.broker.coordinator.consumer.plan import heartbeat_plan
from kafkito.broker.coordinator.consumer.reconcile import FencedMember
from kafkito.broker.coordinator.consumer.records import ClassicMemberMetadata
from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest, OwnedPartitions
from kafkito.broker.coordinator.consumer.state import MemberState
from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.requests import JoinGroupRequest, SyncGroupRequest
from kafkito.broker.coordinator.results import (
    JoinCallback,
    JoinGroupResult,
    LeaveGroupResult,
    LeaveMemberResult,
    LeavingMember,
    SyncCallback,
    SyncGroupResult,
)
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.coordinator")

CONSUMER_PROTOCOL = "consumer"


class ClassicMembers:
    """JoinGroup/SyncGroup/Heartbeat/LeaveGroup of classic members of consumer groups."""

    __slots__ = ("groups", "rt")

    def __init__(self, rt: Runtime, groups: ConsumerGroups) -> None:
        self.rt = rt
        self.groups = groups

    # -- JoinGroup ------------------------------------------------------------------------------

    def join(self, group: ConsumerGroup, request: JoinGroupRequest, callback: JoinCallback) -> None:
        send = self.rt.outbox.send
        prepared = self._prepare(group, request)
        if isinstance(prepared, JoinGroupResult):
            send(callback, prepared)
            return
        member, replaced, heartbeat = prepared
        member_id = heartbeat.member_id
        classic = ClassicMemberMetadata(request.session_timeout_ms, tuple(request.protocols))
        try:
            plan = heartbeat_plan(group, member, replaced, heartbeat, self.groups.context(), classic)
        except FencedMember:
            send(callback, JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if replaced is not None:
            self.groups.timers.cancel(group.group_id, replaced.member_id)
        protocol_name = request.protocols[0][0]
        group_id = group.group_id

        def done(append_error: ErrorCode) -> None:
            if append_error is not ErrorCode.NONE:
                send(callback, JoinGroupResult(member_id, group_write_error(append_error)))
                return
            written = self.rt.consumer_groups.get(group_id)
            if written is not None:
                self.groups.arm_timers(written, member_id)
            epoch = plan.reconciled.member_epoch
            send(
                callback, JoinGroupResult(member_id, ErrorCode.NONE, epoch, CONSUMER_PROTOCOL, protocol_name)
            )

        log.info("consumer_group.classic_member_joined", group=group_id, member=member_id)
        self.groups.write(group_id, plan.records, done)

    def _prepare(
        self, group: ConsumerGroup, request: JoinGroupRequest
    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None, ConsumerHeartbeatRequest] | JoinGroupResult:
        """The joining member, the static member it replaces, and the JoinGroup as a heartbeat; or
        the JoinGroup's error answer."""
        error = self._check_join(request)
        if error is not None:
            return JoinGroupResult(request.member_id, error)
        member_id = request.member_id
        if not member_id:
            member_id = f"{request.group_instance_id or request.client_id}-{uuid.uuid4()}"
            if request.api_version >= 4 and request.group_instance_id is None:
                return JoinGroupResult(member_id, ErrorCode.MEMBER_ID_REQUIRED)
        found = self._member_for(group, request, member_id)
        if isinstance(found, ErrorCode):
            return JoinGroupResult(member_id, found)
        subscription = decode_subscription(request.protocols[0][1])
        if subscription is None:
            return JoinGroupResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        heartbeat = ConsumerHeartbeatRequest(
            group.group_id,
            member_id,
            found[0].member_epoch,
            request.group_instance_id,
            subscription.rack_id,
            request.rebalance_timeout_ms,
            subscription.topics,
            None,
            None,
            self._owned(subscription.owned),
            request.client_id,
            request.client_host,
            api_version=1,
        )
        return found[0], found[1], heartbeat

    def _check_join(self, request: JoinGroupRequest) -> ErrorCode | None:
        config = self.rt.config
        if request.protocol_type != CONSUMER_PROTOCOL or not request.protocols:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if not (
            config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= config.group_max_session_timeout_ms
        ):
            return ErrorCode.INVALID_SESSION_TIMEOUT
        return None

    def _member_for(
        self, group: ConsumerGroup, request: JoinGroupRequest, member_id: str
    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None] | ErrorCode:
        """The joining member (new when unknown), and the static member it replaces."""
        instance_id = request.group_instance_id
        static_id = group.static_members.get(instance_id) if instance_id is not None else None
        if static_id is not None and static_id != member_id:
            if request.member_id:
                return ErrorCode.FENCED_INSTANCE_ID
            old = group.members[static_id]
            return dataclasses.replace(old, member_id=member_id), old
        member = group.members.get(member_id)
        if member is not None:
            return (member, None) if member.classic_member is not None else ErrorCode.UNKNOWN_MEMBER_ID
        if len(group.members) >= self.rt.config.group_consumer_max_size:
            return ErrorCode.GROUP_MAX_SIZE_REACHED
        return ConsumerGroupMember(member_id), None

    def _owned(self, owned: Sequence[tuple[str, tuple[int, ...]]]) -> OwnedPartitions:
        """The owned partitions of the subscription, by topic id (unknown topics are left out)."""
        by_id = []
        for name, partitions in owned:
            info = self.rt.topics.by_name(name)
            if info is not None and partitions:
                by_id.append((info.topic_id, partitions))
        return tuple(by_id)

    # -- SyncGroup, Heartbeat, LeaveGroup -------------------------------------------------------

    def _classic_member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerGroupMember | ErrorCode:
        member = group.members.get(member_id)
        if member is None or member.classic_member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if instance_id is not None and member.instance_id != instance_id:
            return ErrorCode.FENCED_INSTANCE_ID
        return member

    def sync(self, group: ConsumerGroup, request: SyncGroupRequest, callback: SyncCallback) -> None:
        send = self.rt.outbox.send
        member = self._classic_member(group, request.member_id, request.group_instance_id)
        if isinstance(member, ErrorCode):
            send(callback, SyncGroupResult(member))
            return
        assert member.classic_member is not None
        names = [name for name, _ in member.classic_member.supported_protocols]
        if request.generation_id != member.member_epoch:
            send(callback, SyncGroupResult(ErrorCode.ILLEGAL_GENERATION))
            return
        if (request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL) or (
            request.protocol_name is not None and request.protocol_name not in names
        ):
            send(callback, SyncGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        self.groups.arm_timers(group, member.member_id)
        partitions: dict[str, tuple[int, ...]] = {}
        for topic_id, parts in member.assigned.items():
            info = self.rt.topics.by_id(topic_id)
            if info is not None:
                partitions[info.name] = tuple(parts)
        protocol = request.protocol_name or (names[0] if names else None)
        send(
            callback,
            SyncGroupResult(ErrorCode.NONE, CONSUMER_PROTOCOL, protocol, encode_assignment(partitions)),
        )

    def heartbeat(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        member = self._classic_member(group, member_id, instance_id)
        if isinstance(member, ErrorCode):
            return member
        if generation_id != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION
        self.groups.timers.touch(group.group_id, member_id, self.groups.member_session_ms(group, member))
        if member.member_epoch != group.group_epoch or member.state is not MemberState.STABLE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group: ConsumerGroup, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        results = []
        for leaving in members:
            member_id = leaving.member_id
            if not member_id and leaving.group_instance_id is not None:
                member_id = group.static_members.get(leaving.group_instance_id, "")
            member = self._classic_member(group, member_id, leaving.group_instance_id)
            if isinstance(member, ErrorCode):
                results.append(LeaveMemberResult(leaving.member_id, leaving.group_instance_id, member))
                continue
            log.info(
                "consumer_group.member_left", group=group.group_id, member=member_id, reason=leaving.reason
            )
            self.groups.remove(group, member_id, lambda _e: None)
            results.append(LeaveMemberResult(leaving.member_id, leaving.group_instance_id, ErrorCode.NONE))
        return LeaveGroupResult(ErrorCode.NONE, tuple(results))
