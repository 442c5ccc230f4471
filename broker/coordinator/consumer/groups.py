"""The consumer groups of the coordinator: replaying their records, writing them, fencing members
(session and rebalance timeouts), topic changes, and the admin views (describe, list, delete).

`Heartbeats` (heartbeat.py) computes what a heartbeat writes; this part writes records and applies
them: records are replayed once the append succeeded, so the groups are what the log says.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.consumer.assignors import Assignor, parse_assignors
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.group_configs import GroupConfigs
from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember
from kafkito.broker.coordinator.consumer.migration import downgrade_needed, downgrade_records
from kafkito.broker.coordinator.consumer.plan import Context, epoch_records, removal_records
from kafkito.broker.coordinator.consumer.records import (
    CONSUMER_GROUP_RECORD_TYPES,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataTombstone,
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataTombstone,
)
from kafkito.broker.coordinator.consumer.state import ConsumerGroupState, MemberState
from kafkito.broker.coordinator.consumer.timers import MemberTimers
from kafkito.broker.coordinator.records import CoordinatorRecord, CoordinatorResult
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.group import ClassicGroup
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


def is_consumer_group_record(record: object) -> bool:
    return isinstance(record, CONSUMER_GROUP_RECORD_TYPES)


class ConsumerGroups:
    """Writes and replays consumer-group records, and fences members whose deadlines pass."""

    __slots__ = (
        "assignors",
        "configs",
        "default_assignor",
        "on_downgraded",
        "on_upgraded",
        "rt",
        "timers",
        "topics_version",
    )

    def __init__(self, rt: Runtime, assignors: Mapping[str, Assignor] | None = None) -> None:
        self.rt = rt
        if assignors is None:
            chosen = parse_assignors(rt.config.group_consumer_assignors)
            assignors = {a.name: a for a in chosen}
        self.assignors: Mapping[str, Assignor] = assignors
        self.default_assignor: Assignor = next(iter(assignors.values()))
        self.configs = GroupConfigs(rt.config)
        self.timers = MemberTimers(rt.timer, rt.outbox, self._session_expired, self._rebalance_expired)
        # Bumped by every topics change: a regex resolved at an older version is resolved again.
        self.topics_version = 0
        # Told when a group turned back into a classic group (the coordinator starts its rebalance).
        self.on_downgraded: Callable[[str], None] = lambda _group_id: None
        # Told when a classic group became a consumer group (the coordinator retires the old one).
        self.on_upgraded: Callable[[ClassicGroup], None] = lambda _group: None

    def context(self) -> Context:
        return Context(
            self.rt.topics,
            self.topics_version,
            self.rt.clock.now_ms(),
            self.assignors,
            self.default_assignor,
            self.rt.config.group_consumer_assignment_interval_ms,
        )

    def session_timeout_ms(self, group_id: str) -> int:
        return self.configs.session_timeout_ms(group_id)

    def member_session_ms(self, group: ConsumerGroup, member: ConsumerGroupMember) -> int:
        """A classic member keeps the session timeout of its JoinGroup; others the group's."""
        if member.classic_member is not None:
            return member.classic_member.session_timeout_ms
        return self.session_timeout_ms(group.group_id)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.configs.heartbeat_interval_ms(group_id)

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: ConsumerGroupRecord) -> None:
        """Apply one consumer-group record; the first record of a group id creates the group (taking
        over the offsets of an empty classic group of that id), its metadata tombstone removes it."""
        groups = self.rt.consumer_groups
        group = groups.get(record.group_id)
        if isinstance(record, ConsumerGroupMetadataTombstone):
            if group is not None:
                self._remove_group(group)
            return
        if isinstance(record, ConsumerGroupRegexRecord):
            # Regexes resolved before a restart are not stale by the counter alone.
            self.topics_version = max(self.topics_version, record.version)
        if group is None:
            if isinstance(record, _NOT_CREATING):
                return  # nothing to remove, or nothing kafkito keeps (Kafka 4.0's partition metadata)
            group = groups[record.group_id] = ConsumerGroup(record.group_id)
            classic = self.rt.groups.pop(record.group_id, None)
            if classic is not None:
                group.offsets.update(classic.offsets)
                group.pending_offset_commits.update(classic.pending_offset_commits)
        group.replay(record)

    def _remove_group(self, group: ConsumerGroup) -> None:
        """The group is gone; offsets it still has stay, in a classic (simple) group of that id."""
        del self.rt.consumer_groups[group.group_id]
        group.dead = True
        self.timers.cancel_group(group.group_id)
        if group.offsets or group.pending_offset_commits:
            classic = self.rt.get_or_create_group(group.group_id)
            classic.offsets.update(group.offsets)
            classic.pending_offset_commits.update(group.pending_offset_commits)

    # -- writes ---------------------------------------------------------------------------------

    def write(
        self, group_id: str, records: Sequence[CoordinatorRecord], done: Callable[[ErrorCode], None]
    ) -> None:
        """Append the records; once written, replay them and call `done` (NONE, or the append error)."""
        if not records:
            done(ErrorCode.NONE)
            return
        written: list[CoordinatorRecord] = list(records)

        def respond(error: ErrorCode) -> None:
            if error is ErrorCode.NONE:
                self.apply(group_id, written)
            else:
                log.warning("consumer_group.write_failed", group=group_id, error=error.name)
            done(error)

        self.rt.write(CoordinatorResult(group_id, written, respond))

    def apply(self, group_id: str, records: Sequence[CoordinatorRecord]) -> None:
        """Replay written records and log the group's state change, if any."""
        before = self.rt.consumer_groups.get(group_id)
        previous = before.state if before is not None else None
        for record in records:
            self.rt.replay(record)
        after = self.rt.consumer_groups.get(group_id)
        state = after.state if after is not None else ConsumerGroupState.DEAD
        if previous is not state and after is not None:
            members = sorted(after.members)
            log.info(
                "consumer_group.transition",
                group=group_id,
                from_state=previous.value if previous else None,
                to_state=state.value,
                epoch=after.group_epoch,
                members=members,
            )
            self.rt.timeline.transition(
                group_id,
                previous.value if previous else "",
                state.value,
                generation=after.group_epoch,
                reason="consumer group records",
                members=members,
            )

    # -- fencing --------------------------------------------------------------------------------

    def remove(self, group: ConsumerGroup, member_id: str, done: Callable[[ErrorCode], None]) -> None:
        """Remove a member (tombstones, group epoch bump). When only classic members remain and the
        policy allows, the group turns back into a classic group instead (migration.py)."""
        self.timers.cancel(group.group_id, member_id)
        group_id = group.group_id
        if downgrade_needed(group, member_id, self.rt.config):
            records = downgrade_records(group, member_id, self.rt.topics)
            log.info(
                "group.converted",
                group=group_id,
                to_type="classic",
                reason="no consumer-protocol member left",
            )

            def converted(error: ErrorCode) -> None:
                if error is ErrorCode.NONE:
                    self.timers.cancel_group(group_id)
                    self.on_downgraded(group_id)
                done(error)

            self.write(group_id, records, converted)
            return
        self.write(group_id, removal_records(group, member_id, self.context()), done)

    def fence(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        """Remove a member whose deadline passed; nobody waits for the answer."""
        log.info("consumer_group.member_fenced", group=group.group_id, member=member_id, reason=reason)
        self.rt.timeline.member_left(
            group.group_id, member_id, generation=group.group_epoch, reason=reason, event="member_evicted"
        )
        self.remove(group, member_id, lambda _error: None)

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.rt.consumer_groups.get(group_id)
        if group is not None and member_id in group.members:
            self.fence(group, member_id, "session timeout expired")

    def _rebalance_expired(self, group_id: str, member_id: str, epoch: int) -> None:
        group = self.rt.consumer_groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if (
            group is not None
            and member is not None
            and member.state is MemberState.UNREVOKED_PARTITIONS
            and member.member_epoch == epoch
        ):
            self.fence(group, member_id, "rebalance timeout expired while revoking partitions")

    def arm_timers(self, group: ConsumerGroup, member_id: str) -> None:
        """After a heartbeat was written: the session restarts; a revoking member gets its deadline."""
        member = group.members.get(member_id)
        if member is None:
            self.timers.cancel(group.group_id, member_id)
            return
        self.timers.touch(group.group_id, member_id, self.member_session_ms(group, member))
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            timeout = member.rebalance_timeout_ms
            self.timers.arm_rebalance(group.group_id, member_id, member.member_epoch, timeout)
        else:
            self.timers.cancel_rebalance(group.group_id, member_id)

    def on_loaded(self, group_ids: Collection[str]) -> None:
        """Groups replayed from the log: every member's session starts now, and topics that changed
        while the broker was down bump the group epoch (as a topics change would)."""
        ctx = self.context()
        for group_id in group_ids:
            group = self.rt.consumer_groups.get(group_id)
            if group is None:
                continue
            for member_id in group.members:
                self.arm_timers(group, member_id)
            self._refresh(group, ctx)

    # -- topics ---------------------------------------------------------------------------------

    def on_topics_changed(self) -> None:
        """Topics were created, deleted or grew: re-resolve regexes, and bump the epoch of every group
        whose subscribed topics' metadata changed."""
        self.topics_version += 1
        ctx = self.context()
        for group in list(self.rt.consumer_groups.values()):
            self._refresh(group, ctx)

    def resolve_regexes(self, group_id: str) -> None:
        """Resolve the group's regexes a heartbeat left unresolved (Kafka resolves them in the
        background once that heartbeat is answered) and bump its epoch when they match topics."""
        group = self.rt.consumer_groups.get(group_id)
        if group is not None:
            self._refresh(group, self.context())

    def _refresh(self, group: ConsumerGroup, ctx: Context) -> None:
        if not group.members:
            return
        records: list[ConsumerGroupRecord] = []
        epoch_records(group, ctx, records, force=False)
        if records:
            self.write(group.group_id, records, lambda _error: None)


def group_tombstones(group: ConsumerGroup) -> list[CoordinatorRecord]:
    """The tombstones of an empty consumer group's records (its offsets are the offset manager's)."""
    gid = group.group_id
    records: list[CoordinatorRecord] = [
        ConsumerGroupRegexTombstone(gid, regex) for regex in sorted(group.regexes)
    ]
    records.append(ConsumerGroupTargetAssignmentMetadataTombstone(gid))
    records.append(ConsumerGroupMetadataTombstone(gid))
    return records


_NOT_CREATING = (
    ConsumerGroupPartitionMetadataRecord,
    ConsumerGroupPartitionMetadataTombstone,
    ConsumerGroupMemberTombstone,
    ConsumerGroupTargetAssignmentMemberTombstone,
    ConsumerGroupTargetAssignmentMetadataTombstone,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupRegexTombstone,
)
