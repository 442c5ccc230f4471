"""The share groups of the coordinator: ShareGroupHeartbeat (join, heartbeat, leave), session
timeouts, topic changes, replay, and the share-state persister's initialization of assigned
partitions.

Records are appended, then replayed (`GroupCoordinator.replay` routes them here): a share group is
what its records say. A heartbeat's answer goes out once its records are written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.consumer.timers import MemberTimers
from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.records import CoordinatorRecord, CoordinatorResult
from kafkito.broker.coordinator.share.config import ShareConfig
from kafkito.broker.coordinator.share.group import ShareGroup, ShareGroupMember, ShareGroupState
from kafkito.broker.coordinator.share.group_configs import ShareGroupConfigs
from kafkito.broker.coordinator.share.persister_api import SharePersister
from kafkito.broker.coordinator.share.plan import (
    TopicPartitions,
    epoch_records,
    reconcile,
    removal_records,
    state_record,
    state_without,
    to_initialize,
)
from kafkito.broker.coordinator.share.records import (
    ShareGroupMemberRecord,
    ShareGroupMetadataTombstone,
    ShareGroupPartitionMetadataRecord,
    ShareGroupPartitionMetadataTombstone,
    ShareGroupRecord,
    ShareGroupStatePartitionMetadataTombstone,
    ShareGroupTargetAssignmentMetadataTombstone,
)
from kafkito.broker.coordinator.share.requests import (
    LEAVE_EPOCH,
    ShareHeartbeatCallback,
    ShareHeartbeatRequest,
    ShareHeartbeatResult,
    failure,
)
from kafkito.broker.coordinator.share.validate import HeartbeatError, check_epoch, validate_heartbeat
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")

# (topic id, partition) -> (log start offset, log end offset); the broker provides it.
LogOffsets = Callable[[uuid.UUID, int], tuple[int, int]]


class ShareGroups:
    """Writes and replays share-group records; fences members whose session expires."""

    __slots__ = ("config", "configs", "log_offsets", "persister", "rt", "timers")

    def __init__(self, rt: Runtime, config: ShareConfig | None = None) -> None:
        self.rt = rt
        self.config = config or ShareConfig()
        self.configs = ShareGroupConfigs(self.config)
        self.timers = MemberTimers(rt.timer, rt.outbox, self._session_expired, lambda _g, _m, _e: None)
        self.persister: SharePersister | None = None
        self.log_offsets: LogOffsets = lambda _topic_id, _partition: (0, 0)

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: ShareGroupRecord) -> None:
        groups = self.rt.share_groups
        group = groups.get(record.group_id)
        if isinstance(record, ShareGroupMetadataTombstone):
            if group is not None:
                del groups[record.group_id]
                group.dead = True
                self.timers.cancel_group(record.group_id)
            return
        if group is None:
            if isinstance(record, _NOT_CREATING) or type(record).__name__.endswith("Tombstone"):
                return
            group = groups[record.group_id] = ShareGroup(record.group_id)
        group.replay(record)

    # -- heartbeat ------------------------------------------------------------------------------

    def heartbeat(self, request: ShareHeartbeatRequest, callback: ShareHeartbeatCallback) -> None:
        send = self.rt.outbox.send
        invalid = validate_heartbeat(request)
        if invalid is not None:
            send(callback, failure(*invalid))
            return
        status = self.rt.validate_group_status(request.group_id, allow_empty_id=False)
        if status is not None:
            send(callback, failure(status))
            return
        try:
            self._check_type(request.group_id)
            if request.member_epoch == LEAVE_EPOCH:
                self._leave(request, callback)
            else:
                self._heartbeat(request, callback)
        except HeartbeatError as exc:
            send(callback, failure(exc.error, exc.message))

    def of_another_type(self, group_id: str) -> bool:
        """A group id names one group of one type: a classic group with members or offsets, or a
        consumer or streams group, is not a share group."""
        classic = self.rt.groups.get(group_id)
        return (
            group_id in self.rt.consumer_groups
            or group_id in self.rt.streams_groups
            or (classic is not None and (classic.size > 0 or bool(classic.offsets)))
        )

    def _check_type(self, group_id: str) -> None:
        if self.of_another_type(group_id):
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")

    def _heartbeat(self, request: ShareHeartbeatRequest, callback: ShareHeartbeatCallback) -> None:
        group = self.rt.share_groups.get(request.group_id)
        if group is None:
            if request.member_epoch != 0:
                raise HeartbeatError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {request.group_id} not found."
                )
            group = ShareGroup(request.group_id)
        member = self._member_for(group, request)
        records: list[ShareGroupRecord] = []
        updated = ShareGroupMemberRecord(
            group.group_id,
            member.member_id,
            request.rack_id if request.rack_id is not None else member.rack_id,
            request.client_id,
            request.client_host,
            request.subscribed_topic_names
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names,
        )
        known = group.members.get(member.member_id)
        changed = known is None or _identity(known) != updated[2:]
        if changed:
            records.append(updated)
        subscriptions = {m.member_id: m.subscribed_topic_names for m in group.members.values()}
        subscriptions[member.member_id] = updated.subscribed_topic_names
        force = known is None or known.subscribed_topic_names != updated.subscribed_topic_names
        epoch, targets = epoch_records(group, subscriptions, self.rt.topics, force, records)
        target = targets.get(member.member_id, ())
        moved = reconcile(group.group_id, member, epoch, target, records)
        fresh = to_initialize(group, targets, self.rt.topics) if self.persister is not None else {}
        if fresh:
            records.append(state_record(group, self.rt.topics, fresh, {}))
        if known is None:
            self.rt.timeline.member_joined(
                group.group_id, member.member_id, generation=epoch, reason="joining the share group"
            )
        send_assignment = request.member_epoch == 0 or moved
        interval = self.configs.heartbeat_interval_ms(group.group_id)
        group_id, member_id = group.group_id, member.member_id

        def done(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                self.rt.outbox.send(callback, failure(group_write_error(error)))
                return
            self.timers.touch(group_id, member_id, self.configs.session_timeout_ms(group_id))
            result = ShareHeartbeatResult(
                ErrorCode.NONE, None, member_id, epoch, interval, target if send_assignment else None
            )
            self.rt.outbox.send(callback, result)
            if fresh:
                self._initialize(group_id, fresh)

        self.write(group_id, records, done)

    def _member_for(self, group: ShareGroup, request: ShareHeartbeatRequest) -> ShareGroupMember:
        member = group.members.get(request.member_id)
        if member is None:
            if request.member_epoch != 0:
                raise HeartbeatError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
            limit = self.config.group_share_max_size
            if len(group.members) >= limit:
                raise HeartbeatError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of {limit} members.",
                )
            return ShareGroupMember(request.member_id)
        if request.member_epoch != 0:
            check_epoch(member, request.member_epoch)
        return member

    def _leave(self, request: ShareHeartbeatRequest, callback: ShareHeartbeatCallback) -> None:
        group = self.rt.share_groups.get(request.group_id)
        if group is None:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {request.group_id} not found.")
        if request.member_id not in group.members:
            raise HeartbeatError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {request.member_id} is not a member of group {group.group_id}.",
            )
        self.rt.timeline.member_left(
            group.group_id, request.member_id, generation=group.group_epoch, reason="left the share group"
        )
        log.info("share_group.member_left", group=group.group_id, member=request.member_id)
        member_id = request.member_id

        def done(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                self.rt.outbox.send(callback, failure(group_write_error(error)))
            else:
                self.rt.outbox.send(
                    callback, ShareHeartbeatResult(ErrorCode.NONE, None, member_id, LEAVE_EPOCH)
                )

        self.remove(group, member_id, done)

    # -- writes, fencing, topics ----------------------------------------------------------------

    def write(
        self, group_id: str, records: list[ShareGroupRecord], done: Callable[[ErrorCode], None]
    ) -> None:
        """Append the records; once written, replay them and call `done` (NONE or the append error)."""
        if not records:
            done(ErrorCode.NONE)
            return

        def respond(error: ErrorCode) -> None:
            if error is ErrorCode.NONE:
                self._apply(group_id, records)
            else:
                log.warning("share_group.write_failed", group=group_id, error=error.name)
            done(error)

        self.rt.write(CoordinatorResult(group_id, records, respond))

    def _apply(self, group_id: str, records: list[ShareGroupRecord]) -> None:
        before = self.rt.share_groups.get(group_id)
        previous = before.state.value if before is not None else ""
        for record in records:
            self.rt.replay(record)
        after = self.rt.share_groups.get(group_id)
        if after is not None and after.state.value != previous:
            members = sorted(after.members)
            log.info(
                "share_group.transition", group=group_id, from_state=previous, to_state=after.state.value
            )
            self.rt.timeline.transition(
                group_id,
                previous,
                after.state.value,
                generation=after.group_epoch,
                reason="share group records",
                members=members,
            )

    def remove(self, group: ShareGroup, member_id: str, done: Callable[[ErrorCode], None]) -> None:
        self.timers.cancel(group.group_id, member_id)
        self.write(group.group_id, removal_records(group, member_id, self.rt.topics), done)

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.rt.share_groups.get(group_id)
        if group is None or member_id not in group.members:
            return
        log.info(
            "share_group.member_fenced", group=group_id, member=member_id, reason="session timeout expired"
        )
        self.rt.timeline.member_left(
            group_id,
            member_id,
            generation=group.group_epoch,
            reason="session timeout expired",
            event="member_evicted",
        )
        self.remove(group, member_id, lambda _error: None)

    def on_loaded(self, group_ids: Collection[str]) -> None:
        """Groups replayed from the log: sessions start now; topics changed meanwhile bump epochs."""
        for group_id in group_ids:
            group = self.rt.share_groups.get(group_id)
            if group is None:
                continue
            for member_id in group.members:
                self.timers.touch(group_id, member_id, self.configs.session_timeout_ms(group_id))
            self._refresh(group)

    def on_topics_changed(self) -> None:
        for group in list(self.rt.share_groups.values()):
            self._refresh(group)

    def _refresh(self, group: ShareGroup) -> None:
        self._forget_deleted_topics(group)
        if not group.members:
            return
        records: list[ShareGroupRecord] = []
        subscriptions = {m.member_id: m.subscribed_topic_names for m in group.members.values()}
        epoch_records(group, subscriptions, self.rt.topics, False, records)
        if records:
            self.write(group.group_id, records, lambda _error: None)

    # -- the share-state persister --------------------------------------------------------------

    def _forget_deleted_topics(self, group: ShareGroup) -> None:
        """Topics deleted since the group got their state: the persister forgets them, and so does
        the group's state-partition metadata."""
        known = {**group.initializing, **group.initialized}
        gone = [t for t in known if self.rt.topics.by_id(t) is None]
        if not gone:
            return
        if self.persister is not None:
            for topic_id in gone:
                owned = group.initialized.get(topic_id, ("", frozenset()))[1]
                owned |= group.initializing.get(topic_id, ("", frozenset()))[1]
                self.persister.delete(group.group_id, [(topic_id, p) for p in sorted(owned)])
        log.info("share_group.topics_deleted", group=group.group_id, topics=[str(t) for t in gone])
        self.write(group.group_id, [state_without(group, gone)], lambda _error: None)

    def _initialize(self, group_id: str, fresh: TopicPartitions) -> None:
        """Tell the persister of newly assigned partitions (start offset per share.auto.offset.reset),
        then record them initialized."""
        persister = self.persister
        group = self.rt.share_groups.get(group_id)
        if persister is None or group is None:
            return
        for topic_id, partitions in fresh.items():
            for partition in sorted(partitions):
                offset = self.configs.start_offset(group_id, self.log_offsets(topic_id, partition))
                persister.initialize(group_id, topic_id, partition, offset)
        self.write_state(group, fresh)

    def write_state(self, group: ShareGroup, initialized: TopicPartitions) -> None:
        """Record partitions initialized in the persister (nobody waits for the write)."""
        record = state_record(group, self.rt.topics, {}, initialized)
        self.write(group.group_id, [record], lambda _error: None)

    def delete_group(self, group: ShareGroup) -> ErrorCode:
        """DeleteGroups of an empty share group: its tombstones, and the persister forgets its state."""
        if group.state is not ShareGroupState.EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        gid = group.group_id
        tombstones: list[CoordinatorRecord] = [
            ShareGroupStatePartitionMetadataTombstone(gid),
            ShareGroupTargetAssignmentMetadataTombstone(gid),
            ShareGroupMetadataTombstone(gid),
        ]
        self.rt.write_tombstones(gid, tombstones)
        if self.persister is not None:
            self.persister.delete(gid, None)
        log.info("share_group.deleted", group=gid)
        return ErrorCode.NONE

    def member_epoch(self, group_id: str, member_id: str) -> int | None:
        group = self.rt.share_groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        return member.member_epoch if member is not None else None


def _identity(member: ShareGroupMember) -> tuple[object, ...]:
    return (member.rack_id, member.client_id, member.client_host, member.subscribed_topic_names)


_NOT_CREATING = (ShareGroupPartitionMetadataRecord, ShareGroupPartitionMetadataTombstone)
