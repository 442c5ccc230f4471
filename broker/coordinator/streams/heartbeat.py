"""StreamsGroupHeartbeat (Kafka's streamsGroupHeartbeat): join, heartbeat, leave and static leave.

A heartbeat, in Kafka's order: the member is created or updated; the topology is initialized or
updated (STALE_TOPOLOGY for a member behind the group's epoch); the topology is checked against the
topics when their metadata changed; the group epoch is bumped when any of these changed (or the
assignment configs did); a new target assignment is computed when the group epoch is ahead of it;
the member is reconciled towards its target. The records are written, and only then is the answer
sent (with the statuses, the internal topics the broker must create and, for interactive queries,
the endpoints' partitions when the member's endpoint epoch is behind).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple, TypeVar

import structlog

from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.streams.endpoints import all_endpoints
from kafkito.broker.coordinator.streams.group import StreamsGroup
from kafkito.broker.coordinator.streams.groups import StreamsGroups
from kafkito.broker.coordinator.streams.internal_topics import ConfiguredTopology, InvalidTopology, StatusCode
from kafkito.broker.coordinator.streams.member import STATIC_LEFT_EPOCH, StreamsGroupMember
from kafkito.broker.coordinator.streams.reconcile import FencedMember, Reconciled, Unreleased, reconcile
from kafkito.broker.coordinator.streams.records import (
    StreamsGroupMetadataRecord,
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMetadataRecord,
    StreamsGroupTopologyRecord,
)
from kafkito.broker.coordinator.streams.requests import (
    JOIN_EPOCH,
    STATIC_LEAVE_EPOCH,
    Status,
    StreamsHeartbeatCallback,
    StreamsHeartbeatRequest,
    StreamsHeartbeatResult,
)
from kafkito.broker.coordinator.streams.target import INITIAL_DELAY, INTERVAL_DELAY, new_target, target_record
from kafkito.broker.coordinator.streams.tasks import Task, TaskSet, task_map
from kafkito.broker.coordinator.streams.topology import StreamsTopology
from kafkito.broker.coordinator.streams.validate import validate_heartbeat
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.coordinator")

T = TypeVar("T")

_REJOIN = "The member must abandon all its partitions and rejoin."


class HeartbeatError(Exception):
    """A heartbeat refused with Kafka's error and message."""

    def __init__(self, error: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or error.name)
        self.error = error
        self.message = message


def _failed(error: ErrorCode, message: str | None = None) -> StreamsHeartbeatResult:
    return StreamsHeartbeatResult(error, message)


class _Plan(NamedTuple):
    records: list[StreamsGroupRecord]
    member: StreamsGroupMember
    reconciled: Reconciled
    configured: ConfiguredTopology
    statuses: list[Status]


class Heartbeats:
    """The StreamsGroupHeartbeat request of every streams group."""

    __slots__ = ("groups", "rt")

    def __init__(self, groups: StreamsGroups) -> None:
        self.groups = groups
        self.rt = groups.rt

    def heartbeat(self, request: StreamsHeartbeatRequest, callback: StreamsHeartbeatCallback) -> None:
        send = self.rt.outbox.send
        failure = validate_heartbeat(request)
        if failure is not None:
            send(callback, _failed(*failure))
            return
        status = self.rt.validate_group_status(request.group_id, allow_empty_id=False)
        if status is not None:
            send(callback, _failed(status))
            return
        try:
            if self.groups.of_another_type(request.group_id):
                raise HeartbeatError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a streams group."
                )
            if request.member_epoch < 0:
                self._leave(request, callback)
            else:
                self._heartbeat(request, callback)
        except HeartbeatError as exc:
            send(callback, _failed(exc.error, exc.message))

    # -- join and heartbeat ---------------------------------------------------------------------

    def _heartbeat(self, request: StreamsHeartbeatRequest, callback: StreamsHeartbeatCallback) -> None:
        group = self.groups.groups.get(request.group_id)
        if group is None:
            if request.member_epoch != JOIN_EPOCH:
                raise HeartbeatError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {request.group_id} not found."
                )
            group = StreamsGroup(request.group_id)
        member, replaced = self._member_for(group, request)
        if not group.members:
            self.groups.start_initial_delay(group.group_id)
        try:
            plan = self._plan(group, member, replaced, request)
        except FencedMember as exc:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH, str(exc)) from None
        except InvalidTopology as exc:
            raise HeartbeatError(ErrorCode.STREAMS_INVALID_TOPOLOGY, str(exc)) from None
        if replaced is not None:
            self.groups.timers.cancel(group.group_id, replaced.member_id)
            log.info(
                "streams_group.static_member_replaced",
                group=group.group_id,
                instance=request.instance_id,
                old_member=replaced.member_id,
                member=member.member_id,
            )
            self.rt.timeline.record(
                group.group_id,
                "member_replaced",
                generation=group.group_epoch,
                reason=f"static member {request.instance_id} rejoined",
                member=member.member_id,
                old_member=replaced.member_id,
                instance=request.instance_id,
            )
        if member.member_id not in group.members:
            self.rt.timeline.member_joined(
                group.group_id, member.member_id, generation=group.group_epoch, reason="joining the group"
            )
        group_id = group.group_id
        previous_tasks = member.assigned

        def done(error: ErrorCode) -> None:
            written = self.groups.groups.get(group_id)
            if error is not ErrorCode.NONE or written is None:
                self.rt.outbox.send(callback, _failed(group_write_error(error)))
                return
            self.rt.outbox.send(callback, self._answer(written, request, plan, previous_tasks))

        self.groups.write(group_id, plan.records, done, plan.configured)

    def _answer(
        self, group: StreamsGroup, request: StreamsHeartbeatRequest, plan: _Plan, previous_tasks: TaskSet
    ) -> StreamsHeartbeatResult:
        """The answer once the records are written: tasks when joining or changed, the statuses, the
        internal topics to create, the endpoints when the member's endpoint epoch is behind."""
        member_id = plan.member.member_id
        self.groups.arm_timers(group, member_id)
        if request.shutdown_application:
            group.shutdown_requested_by = member_id
        now = group.members[member_id]
        send_tasks = request.member_epoch == JOIN_EPOCH or now.assigned != previous_tasks
        if send_tasks and now.user_endpoint is not None:
            group.endpoint_information_epoch += 1
        statuses = list(plan.statuses)
        if group.shutdown_requested_by is not None:
            statuses.append(
                Status(
                    StatusCode.SHUTDOWN_APPLICATION,
                    f"Streams group member {group.shutdown_requested_by} encountered a fatal error and "
                    "requested a shutdown for the entire application.",
                )
            )
        endpoints = None
        if group.endpoint_information_epoch != request.endpoint_information_epoch:
            endpoints = all_endpoints(group, now)
        active, standby, warmup = now.assigned.wire() if send_tasks else (None, None, None)
        configured = plan.configured
        configs = self.groups.configs
        return StreamsHeartbeatResult(
            ErrorCode.NONE,
            None,
            now.member_id,
            now.member_epoch,
            configs.heartbeat_interval_ms(group.group_id),
            configs.acceptable_recovery_lag(group.group_id),
            configs.task_offset_interval_ms(group.group_id),
            tuple(statuses) if statuses else None,
            active,
            standby,
            warmup,
            group.endpoint_information_epoch,
            endpoints,
            configured.to_create if configured.status is StatusCode.MISSING_INTERNAL_TOPICS else (),
        )

    def _plan(
        self,
        group: StreamsGroup,
        member: StreamsGroupMember,
        replaced: StreamsGroupMember | None,
        request: StreamsHeartbeatRequest,
    ) -> _Plan:
        gid = group.group_id
        records: list[StreamsGroupRecord] = []
        statuses: list[Status] = []
        updated = _updated(member, request)
        bump = False
        known = group.members.get(updated.member_id)
        if replaced is not None:
            records.extend(self.groups.removal_records(group, replaced.member_id)[:3])
        if known is None or known.metadata_record(gid) != updated.metadata_record(gid):
            records.append(updated.metadata_record(gid))
            bump = bump or replaced is None or _identity(replaced) != _identity(updated)

        # 2. The topology.
        topology = self._topology(group, request, records)
        _stale_status(topology, updated, statuses)
        stale = list(statuses)
        metadata_hash = self.groups.metadata_hash(topology)
        configured = self._configured(group, topology, metadata_hash)
        bump = bump or metadata_hash != group.metadata_hash
        validated = topology.epoch if configured.is_ready else -1
        bump = bump or validated != group.validated_topology_epoch
        if configured.status is not None:
            statuses.append(Status(configured.status, configured.detail))
        assignment_configs = self.groups.configs.assignment_configs(gid)
        if assignment_configs != group.last_assignment_configs:
            bump = True
        epoch = group.group_epoch
        if bump:
            epoch += 1
            records.append(
                StreamsGroupMetadataRecord(gid, epoch, metadata_hash, validated, assignment_configs)
            )
            log.info("streams_group.epoch_bumped", group=gid, member=updated.member_id, epoch=epoch)

        # 4. The target assignment, unless the initial delay or the assignment interval holds it back.
        target_epoch, target, delay = self._target_step(group, updated, replaced, configured, epoch, records)
        if delay is not None:
            statuses.insert(len(stale), delay)

        # 5. Reconciliation.
        owned = _owned(request)
        reconciled = reconcile(
            updated, target_epoch, target, self._unreleased(group, updated, replaced), owned
        )
        now = dataclasses.replace(
            updated,
            member_epoch=reconciled.member_epoch,
            previous_member_epoch=reconciled.previous_member_epoch,
            state=reconciled.state,
            assigned=reconciled.assigned,
            pending_revocation=reconciled.pending_revocation,
        )
        if (
            known is None
            or now.assignment_record(gid) != updated.assignment_record(gid)
            or replaced is not None
        ):
            records.append(now.assignment_record(gid))
        return _Plan(records, now, reconciled, configured, statuses)

    def _target_step(
        self,
        group: StreamsGroup,
        updated: StreamsGroupMember,
        replaced: StreamsGroupMember | None,
        configured: ConfiguredTopology,
        epoch: int,
        records: list[StreamsGroupRecord],
    ) -> tuple[int, TaskSet, Status | None]:
        """The member's target and its epoch, and the ASSIGNMENT_DELAYED status when a delay holds a new
        target back (the initial delay: an empty target at epoch 1 at least; the interval: the last)."""
        gid = group.group_id
        now_ms = self.rt.clock.now_ms()
        if epoch > group.assignment_epoch and self.groups.initial_delay_active(gid):
            if group.assignment_epoch == 0:
                records.append(StreamsGroupTargetAssignmentMetadataRecord(gid, 1, now_ms))
            return max(1, group.assignment_epoch), TaskSet.empty(), INITIAL_DELAY
        if epoch > group.assignment_epoch and self.groups.may_assign(group, now_ms):
            return epoch, self._target(group, updated, replaced, configured, epoch, records, now_ms), None
        moved = replaced.member_id if replaced is not None else updated.member_id
        target = group.target.get(moved, TaskSet.empty())
        if replaced is not None:
            records.append(target_record(gid, updated.member_id, target))
        delay = INTERVAL_DELAY if epoch > group.assignment_epoch else None
        return group.assignment_epoch, target, delay

    def _configured(
        self, group: StreamsGroup, topology: StreamsTopology, metadata_hash: int
    ) -> ConfiguredTopology:
        """The topology checked against the topics again when it or their metadata changed."""
        configured = group.configured
        if group.topology != topology or configured is None or metadata_hash != group.metadata_hash:
            configured = self.groups.configure(topology, metadata_hash)
        return configured

    def _topology(
        self, group: StreamsGroup, request: StreamsHeartbeatRequest, records: list[StreamsGroupRecord]
    ) -> StreamsTopology:
        """Kafka's maybeUpdateTopology: the first member's topology initializes the group's, a newer
        epoch replaces it, an older one is stale (the group's stays)."""
        current = group.topology
        sent = request.topology.normalized() if request.topology is not None else None
        if sent is None:
            if current is None:
                raise HeartbeatError(
                    ErrorCode.INVALID_REQUEST, "The group has no topology: the member must rejoin."
                )
            return current
        if current is None:
            records.append(StreamsGroupTopologyRecord(group.group_id, sent))
            log.info(
                "streams_group.topology", group=group.group_id, member=request.member_id, epoch=sent.epoch
            )
            return sent
        if sent.epoch < current.epoch or sent == current:
            return current
        # Kafka 4.4 keeps a group's first topology: a newer epoch, or another topology under the same
        # one, is refused (STREAMS_INVALID_TOPOLOGY_EPOCH is not used yet).
        raise HeartbeatError(ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")

    def _target(
        self,
        group: StreamsGroup,
        updated: StreamsGroupMember,
        replaced: StreamsGroupMember | None,
        configured: ConfiguredTopology,
        epoch: int,
        records: list[StreamsGroupRecord],
        now_ms: int,
    ) -> TaskSet:
        gid = group.group_id
        members = {m.member_id: m for m in group.members.values()}
        targets = dict(group.target)
        if replaced is not None:
            members.pop(replaced.member_id, None)
            targets[updated.member_id] = targets.pop(replaced.member_id, TaskSet.empty())
        members[updated.member_id] = updated
        standbys = self.groups.configs.num_standby_replicas(gid)
        new = new_target(gid, members, targets, configured, standbys, epoch, now_ms, records)
        return new.get(updated.member_id, TaskSet.empty())

    def _unreleased(
        self, group: StreamsGroup, member: StreamsGroupMember, replaced: StreamsGroupMember | None
    ) -> Unreleased:
        mine = {member.member_id} if replaced is None else {member.member_id, replaced.member_id}
        process = member.process_id

        def replica_on_my_process(task: Task) -> bool:
            for holder in group.replica_holders.get(task, ()):
                other = group.members.get(holder)
                if holder not in mine and other is not None and other.process_id == process:
                    return True
            return False

        def active(task: Task) -> bool:
            owner = group.active_owners.get(task)
            return (owner is not None and owner not in mine) or replica_on_my_process(task)

        def replica(task: Task) -> bool:
            owner = group.active_owners.get(task)
            if owner is not None and owner not in mine:
                other = group.members.get(owner)
                if other is not None and other.process_id == process:
                    return True
            return replica_on_my_process(task)

        return Unreleased(active, replica, replica)

    def _member_for(
        self, group: StreamsGroup, request: StreamsHeartbeatRequest
    ) -> tuple[StreamsGroupMember, StreamsGroupMember | None]:
        """The member the heartbeat is for (a new one for a join), and the static member it replaces."""
        if request.instance_id is not None:
            return self._static_member_for(group, request)
        member = group.members.get(request.member_id)
        if member is None:
            if request.member_epoch != JOIN_EPOCH:
                raise HeartbeatError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
            self._check_capacity(group)
            return StreamsGroupMember(request.member_id), None
        _check_epoch(member, request)
        return member, None

    def _static_member_for(
        self, group: StreamsGroup, request: StreamsHeartbeatRequest
    ) -> tuple[StreamsGroupMember, StreamsGroupMember | None]:
        instance_id = request.instance_id
        assert instance_id is not None
        existing_id = group.static_members.get(instance_id)
        existing = group.members.get(existing_id) if existing_id is not None else None
        if request.member_epoch == JOIN_EPOCH:
            if existing is None:
                self._check_capacity(group)
                return StreamsGroupMember(request.member_id, instance_id=instance_id), None
            if existing.member_id == request.member_id:
                return existing, None
            if existing.member_epoch != STATIC_LEFT_EPOCH:
                raise HeartbeatError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {existing.member_id} with instance id {instance_id} is not released yet.",
                )
            # The new incarnation starts from nothing: the old one's tasks are released by its tombstones
            # and its target becomes the new member's, so it gets them back at once.
            fresh = StreamsGroupMember(
                request.member_id,
                instance_id=instance_id,
                rack_id=existing.rack_id,
                rebalance_timeout_ms=existing.rebalance_timeout_ms,
                topology_epoch=existing.topology_epoch,
                process_id=existing.process_id,
                user_endpoint=existing.user_endpoint,
                client_tags=existing.client_tags,
            )
            return fresh, existing
        if existing is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != request.member_id:
            raise HeartbeatError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Instance id {instance_id} belongs to member {existing.member_id}.",
            )
        _check_epoch(existing, request)
        return existing, None

    def _check_capacity(self, group: StreamsGroup) -> None:
        limit = self.groups.configs.config.max_size
        if len(group.members) >= limit:
            raise HeartbeatError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The streams group has reached its maximum capacity of {limit} members.",
            )

    # -- leave ----------------------------------------------------------------------------------

    def _leave(self, request: StreamsHeartbeatRequest, callback: StreamsHeartbeatCallback) -> None:
        group = self.groups.groups.get(request.group_id)
        if group is None:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {request.group_id} not found.")
        member = self._leaving_member(group, request)
        result = StreamsHeartbeatResult(ErrorCode.NONE, None, member.member_id, request.member_epoch)

        def done(error: ErrorCode) -> None:
            self.rt.outbox.send(
                callback, result if error is ErrorCode.NONE else _failed(group_write_error(error))
            )

        if request.member_epoch == STATIC_LEAVE_EPOCH:
            # The static member keeps its tasks for a while: it may come back as itself.
            left = dataclasses.replace(member, member_epoch=STATIC_LEFT_EPOCH)
            self.groups.timers.cancel_rebalance(group.group_id, member.member_id)
            log.info("streams_group.member_left", group=group.group_id, member=member.member_id, static=True)
            self.groups.write(group.group_id, [left.assignment_record(group.group_id)], done)
            return
        reason = "the member left the group"
        self.rt.timeline.member_left(
            group.group_id, member.member_id, generation=group.group_epoch, reason=reason, event="member_left"
        )
        log.info("streams_group.member_left", group=group.group_id, member=member.member_id, reason=reason)
        self.groups.remove(group, member.member_id, done)

    def _leaving_member(self, group: StreamsGroup, request: StreamsHeartbeatRequest) -> StreamsGroupMember:
        if request.instance_id is not None:
            member_id = group.static_members.get(request.instance_id)
            if member_id is None:
                raise HeartbeatError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown."
                )
            if member_id != request.member_id:
                raise HeartbeatError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Instance id {request.instance_id} belongs to member {member_id}.",
                )
        member = group.members.get(request.member_id)
        if member is None:
            raise HeartbeatError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {request.member_id} is not a member of group {group.group_id}.",
            )
        return member


def _pick(sent: T | None, kept: T) -> T:
    return kept if sent is None else sent


def _updated(member: StreamsGroupMember, request: StreamsHeartbeatRequest) -> StreamsGroupMember:
    """The member with what the heartbeat changed (None and -1 leave a field as it is)."""
    pick = _pick
    timeout = request.rebalance_timeout_ms
    return dataclasses.replace(
        member,
        instance_id=pick(request.instance_id, member.instance_id),
        rack_id=pick(request.rack_id, member.rack_id),
        rebalance_timeout_ms=member.rebalance_timeout_ms if timeout == -1 else timeout,
        topology_epoch=request.topology.epoch if request.topology is not None else member.topology_epoch,
        client_id=request.client_id,
        client_host=request.client_host,
        process_id=pick(request.process_id, member.process_id),
        client_tags=pick(request.client_tags, member.client_tags),
        user_endpoint=pick(request.user_endpoint, member.user_endpoint),
    )


def _stale_status(topology: StreamsTopology, member: StreamsGroupMember, statuses: list[Status]) -> None:
    if topology.epoch > member.topology_epoch:
        statuses.append(
            Status(
                StatusCode.STALE_TOPOLOGY,
                f"The member's topology epoch {member.topology_epoch} is behind the group's topology "
                f"epoch {topology.epoch}.",
            )
        )


def _identity(member: StreamsGroupMember) -> tuple[object, ...]:
    """What a static member's replacement may change without a new target assignment."""
    return (member.rack_id, member.process_id, member.client_tags, member.topology_epoch)


def _owned(request: StreamsHeartbeatRequest) -> TaskSet | None:
    if request.active_tasks is None or request.standby_tasks is None or request.warmup_tasks is None:
        return None
    return TaskSet(
        task_map(request.active_tasks), task_map(request.standby_tasks), task_map(request.warmup_tasks)
    )


def _check_epoch(member: StreamsGroupMember, request: StreamsHeartbeatRequest) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid: ahead is fenced; behind is fenced unless it is
    the previous epoch and the member owns nothing it was not assigned (it missed the last answer).
    Epoch 0 is a member rejoining under its id: it starts over, owning nothing."""
    received = request.member_epoch
    if received == JOIN_EPOCH:
        return
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a greater member epoch ({received}) than the one known by the "
            f"group coordinator ({member.member_epoch}). {_REJOIN}",
        )
    if received < member.member_epoch:
        owned = _owned(request)
        if received != member.previous_member_epoch or owned is None or not _within(owned, member.assigned):
            raise HeartbeatError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The streams group member has a smaller member epoch ({received}) than the one known by the "
                f"group coordinator ({member.member_epoch}). {_REJOIN}",
            )


def _within(owned: TaskSet, assigned: TaskSet) -> bool:
    for mine, allowed in zip(owned, assigned, strict=True):
        for subtopology, partitions in mine.items():
            if not partitions <= allowed.get(subtopology, frozenset()):
                return False
    return True
