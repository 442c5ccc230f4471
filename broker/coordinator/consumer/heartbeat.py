"""ConsumerGroupHeartbeat (Kafka's consumerGroupHeartbeat): join, heartbeat, leave and static leave.

A heartbeat is checked (validate.py), its records computed from the group as it is (plan.py), then
written; the group changes when they are replayed, and only then does the answer go out.
"""

from __future__ import annotations

import base64
import dataclasses
import uuid

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.consumer.group import STATIC_LEFT_EPOCH, ConsumerGroup
from kafkito.broker.coordinator.consumer.groups import ConsumerGroups
from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember
from kafkito.broker.coordinator.consumer.migration import can_upgrade, upgrade_records
from kafkito.broker.coordinator.consumer.plan import Plan, heartbeat_plan
from kafkito.broker.coordinator.consumer.reconcile import FencedMember
from kafkito.broker.coordinator.consumer.records import to_assignment
from kafkito.broker.coordinator.consumer.requests import (
    JOIN_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerHeartbeatRequest,
)
from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult, HeartbeatCallback
from kafkito.broker.coordinator.consumer.validate import validate_heartbeat
from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.records import CoordinatorRecord
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.coordinator")

_REJOIN = "The member must abandon all its partitions and rejoin."


class HeartbeatError(Exception):
    """A heartbeat refused with Kafka's error and message."""

    def __init__(self, error: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or error.name)
        self.error = error
        self.message = message


def _failed(error: ErrorCode, message: str | None, interval_ms: int = 0) -> ConsumerHeartbeatResult:
    return ConsumerHeartbeatResult(error, message, None, 0, interval_ms, None)


def new_member_id() -> str:
    """A member id as Kafka makes them (a random UUID in URL-safe base64, unpadded)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class Heartbeats:
    """The ConsumerGroupHeartbeat request of every consumer group."""

    __slots__ = ("groups", "rt")

    def __init__(self, rt: Runtime, groups: ConsumerGroups) -> None:
        self.rt = rt
        self.groups = groups

    def heartbeat(self, request: ConsumerHeartbeatRequest, callback: HeartbeatCallback) -> None:
        send = self.rt.outbox.send
        failure = validate_heartbeat(request, list(self.groups.assignors))
        if failure is not None:
            send(callback, _failed(*failure))
            return
        status = self.rt.validate_group_status(request.group_id, allow_empty_id=False)
        if status is not None:
            send(callback, _failed(status, None))
            return
        if request.member_id == "" and request.member_epoch == JOIN_EPOCH:
            request = request._replace(member_id=new_member_id())
        try:
            if request.member_epoch < 0:
                self._leave(request, callback)
            else:
                self._heartbeat(request, callback)
        except HeartbeatError as exc:
            send(callback, _failed(exc.error, exc.message))

    # -- join and heartbeat ---------------------------------------------------------------------

    def _heartbeat(self, request: ConsumerHeartbeatRequest, callback: HeartbeatCallback) -> None:
        group, upgrade = self._group_for(request)
        retired = self.rt.groups.get(group.group_id) if upgrade else None
        member, replaced = self._member_for(group, request)
        try:
            plan = heartbeat_plan(group, member, replaced, request, self.groups.context())
        except FencedMember as exc:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH, str(exc)) from None
        if replaced is not None:
            self.groups.timers.cancel(group.group_id, replaced.member_id)
            log.info(
                "consumer_group.static_member_replaced",
                group=group.group_id,
                instance=request.instance_id,
                old_member=replaced.member_id,
                member=member.member_id,
            )
        if member.member_id not in group.members:
            self.rt.timeline.member_joined(
                group.group_id, member.member_id, generation=group.group_epoch, reason="joining the group"
            )
        send_assignment = request.member_epoch == JOIN_EPOCH or _assignment_news(member, plan, request)
        interval = self.groups.heartbeat_interval_ms(group.group_id)
        group_id = group.group_id

        def done(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                self.rt.outbox.send(callback, _failed(group_write_error(error), None, interval))
                return
            if retired is not None:  # its timers and parked requests end with it
                self.groups.on_upgraded(retired)
            written = self.rt.consumer_groups.get(group_id)
            if written is not None:
                for member_id in written.members if upgrade else (plan.member.member_id,):
                    self.groups.arm_timers(written, member_id)
            reconciled = plan.reconciled
            assignment = to_assignment(reconciled.assigned) if send_assignment else None
            result = ConsumerHeartbeatResult(
                ErrorCode.NONE, None, plan.member.member_id, reconciled.member_epoch, interval, assignment
            )
            self.rt.outbox.send(callback, result)
            if plan.resolve_regexes:
                self.groups.resolve_regexes(group_id)

        self.groups.write(group_id, [*upgrade, *plan.records], done)

    def _group_for(self, request: ConsumerHeartbeatRequest) -> tuple[ConsumerGroup, list[CoordinatorRecord]]:
        """The member's group: existing, or new (created by its first record) for a join, or the
        classic group of that id converted (with the records that convert it)."""
        group_id = request.group_id
        group = self.rt.consumer_groups.get(group_id)
        if group is not None:
            return group, []
        classic = self.rt.groups.get(group_id)
        if request.member_epoch != JOIN_EPOCH:
            raise HeartbeatError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not in group {group_id}."
            )
        if classic is not None and classic.size > 0:
            return self._upgrade(classic)
        return ConsumerGroup(group_id), []

    def _upgrade(self, classic: ClassicGroup) -> tuple[ConsumerGroup, list[CoordinatorRecord]]:
        """The consumer group a classic group turns into (computed, not yet written), and its records;
        the classic group is retired once they are written (the consumer group's first replay)."""
        reason = can_upgrade(classic, self.rt.config)
        if reason is not None:
            raise HeartbeatError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade classic group {classic.group_id} to a consumer group: {reason}.",
            )
        records = upgrade_records(classic, self.rt.topics)
        converted = ConsumerGroup(classic.group_id)
        for record in records[1:]:
            converted.replay(record)  # type: ignore[arg-type]
        log.info(
            "group.converted", group=classic.group_id, to_type="consumer", reason="consumer member joined"
        )
        return converted, records

    def _member_for(
        self, group: ConsumerGroup, request: ConsumerHeartbeatRequest
    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None]:
        """The member the heartbeat is for (a new one for a join), and the static member it replaces."""
        if request.instance_id is not None:
            return self._static_member_for(group, request)
        member = group.members.get(request.member_id)
        if member is None:
            if request.member_epoch != JOIN_EPOCH:
                raise HeartbeatError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not in group {group.group_id}.",
                )
            self._check_capacity(group)
            return ConsumerGroupMember(request.member_id), None
        _check_epoch(member, request)
        return member, None

    def _static_member_for(
        self, group: ConsumerGroup, request: ConsumerHeartbeatRequest
    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None]:
        instance_id = request.instance_id
        assert instance_id is not None
        existing_id = group.static_members.get(instance_id)
        existing = group.members.get(existing_id) if existing_id is not None else None
        if request.member_epoch == JOIN_EPOCH:
            if existing is None:
                self._check_capacity(group)
                return ConsumerGroupMember(request.member_id), None
            if existing.member_epoch != STATIC_LEFT_EPOCH:
                raise HeartbeatError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {existing.member_id} with instance id {instance_id} is not released yet.",
                )
            if existing.member_id == request.member_id:
                return existing, None
            return dataclasses.replace(existing, member_id=request.member_id), existing
        if existing is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != request.member_id:
            raise HeartbeatError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Instance id {instance_id} belongs to member {existing.member_id}.",
            )
        _check_epoch(existing, request)
        return existing, None

    def _check_capacity(self, group: ConsumerGroup) -> None:
        limit = self.rt.config.group_consumer_max_size
        if len(group.members) >= limit:
            raise HeartbeatError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {limit} members.",
            )

    # -- leave ----------------------------------------------------------------------------------

    def _leave(self, request: ConsumerHeartbeatRequest, callback: HeartbeatCallback) -> None:
        group = self.rt.consumer_groups.get(request.group_id)
        if group is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {request.group_id} has no members.")
        member = self._leaving_member(group, request)
        result = ConsumerHeartbeatResult(
            ErrorCode.NONE, None, member.member_id, request.member_epoch, 0, None
        )

        def done(error: ErrorCode) -> None:
            answer = result if error is ErrorCode.NONE else _failed(group_write_error(error), None)
            self.rt.outbox.send(callback, answer)

        if request.member_epoch == STATIC_LEAVE_EPOCH:
            # The static member keeps its assignment for a while: it may come back as itself.
            left = dataclasses.replace(member, member_epoch=STATIC_LEFT_EPOCH, pending_revocation={})
            self.groups.timers.cancel_rebalance(group.group_id, member.member_id)
            log.info("consumer_group.member_left", group=group.group_id, member=member.member_id, static=True)
            self.groups.write(group.group_id, [left.assignment_record(group.group_id)], done)
            return
        reason = "the member left the group"
        self.rt.timeline.member_left(
            group.group_id, member.member_id, generation=group.group_epoch, reason=reason, event="member_left"
        )
        log.info("consumer_group.member_left", group=group.group_id, member=member.member_id, reason=reason)
        self.groups.remove(group, member.member_id, done)

    def _leaving_member(self, group: ConsumerGroup, request: ConsumerHeartbeatRequest) -> ConsumerGroupMember:
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
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not in group {group.group_id}."
            )
        return member


def _check_epoch(member: ConsumerGroupMember, request: ConsumerHeartbeatRequest) -> None:
    """Kafka's throwIfMemberEpochIsInvalid: ahead is fenced; behind is fenced unless it is the
    previous epoch and the member owns nothing it should not (it missed the last answer), or it is
    0: a member rejoins after being fenced."""
    received = request.member_epoch
    if received == JOIN_EPOCH:
        return  # a fenced member rejoining under its id (KAFKA-19233): it starts over, owning nothing
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({received}) than the one known by "
            f"the group coordinator ({member.member_epoch}). {_REJOIN}",
        )
    if received < member.member_epoch:
        owned = request.owned_partitions
        if received != member.previous_member_epoch or owned is None or not _is_subset(owned, member):
            raise HeartbeatError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({received}) than the one known by "
                f"the group coordinator ({member.member_epoch}). {_REJOIN}",
            )


def _is_subset(owned: tuple[tuple[uuid.UUID, tuple[int, ...]], ...], member: ConsumerGroupMember) -> bool:
    for topic_id, partitions in owned:
        assigned = member.assigned.get(topic_id, frozenset())
        if not assigned.issuperset(partitions):
            return False
    return True


def _assignment_news(member: ConsumerGroupMember, plan: Plan, request: ConsumerHeartbeatRequest) -> bool:
    """Whether the answer carries the assignment: a full request (the rebalance timeout, a
    subscription and the owned partitions, as a client sends after an error or a subscription
    change) always gets it, as on Kafka; so does a change, or a member reporting it owns otherwise."""
    owned = request.owned_partitions
    full = (
        request.rebalance_timeout_ms != -1
        and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
        and owned is not None
    )
    assigned = plan.reconciled.assigned
    if full or assigned != member.assigned:
        return True
    if owned is None:
        return False
    return {t: frozenset(p) for t, p in owned if p} != assigned
