"""The streams groups of the coordinator: replaying and writing their records, fencing members whose
session or rebalance timeout passes (on the coordinator's timer), and removing members.

`Heartbeats` (heartbeat.py) computes what a StreamsGroupHeartbeat writes; this part appends the
records and applies them once written, so the groups are what the log says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, cast

import structlog

from kafkito.broker.coordinator.consumer.timers import MemberTimers
from kafkito.broker.coordinator.records import CoordinatorRecord, CoordinatorResult
from kafkito.broker.coordinator.streams.config import StreamsConfig, StreamsGroupConfigs
from kafkito.broker.coordinator.streams.group import StreamsGroup
from kafkito.broker.coordinator.streams.internal_topics import ConfiguredTopology, configure
from kafkito.broker.coordinator.streams.member import MemberState, StreamsGroupState
from kafkito.broker.coordinator.streams.rebalances import Before, record_rebalance
from kafkito.broker.coordinator.streams.records import (
    StreamsGroupCurrentAssignmentTombstone,
    StreamsGroupMemberTombstone,
    StreamsGroupMetadataRecord,
    StreamsGroupMetadataTombstone,
    StreamsGroupRecord,
    StreamsGroupTargetAssignmentMemberTombstone,
    StreamsGroupTargetAssignmentMetadataTombstone,
    StreamsGroupTopologyTombstone,
)
from kafkito.broker.coordinator.streams.target import may_assign, new_target
from kafkito.broker.coordinator.streams.topology import StreamsTopology
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory.timer import TimerTask

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime

log = structlog.get_logger("kafkito.coordinator")


class StreamsGroups:
    """Writes and replays streams-group records, and fences members whose deadlines pass."""

    __slots__ = ("_initial_delays", "configs", "groups", "rt", "timers")

    def __init__(self, rt: Runtime, config: StreamsConfig | None = None) -> None:
        self.rt = rt
        self.configs = StreamsGroupConfigs(config or StreamsConfig())
        # Streams group ids are in the one namespace of group ids (checked against the other types).
        self.groups: dict[str, StreamsGroup] = rt.streams_groups
        self.timers = MemberTimers(rt.timer, rt.outbox, self._session_expired, self._rebalance_expired)
        self._initial_delays: dict[str, TimerTask] = {}

    # -- when a target assignment may be computed (target.py) -----------------------------------

    def start_initial_delay(self, group_id: str) -> None:
        """A member joins the group while it has none: its first target waits for the initial delay."""
        delay = self.configs.initial_rebalance_delay_ms(group_id)
        if delay > 0 and group_id not in self._initial_delays:
            self._initial_delays[group_id] = self.rt.timer.schedule(
                delay, lambda: self._initial_delay_over(group_id)
            )

    def initial_delay_active(self, group_id: str) -> bool:
        return group_id in self._initial_delays

    def may_assign(self, group: StreamsGroup, now_ms: int) -> bool:
        interval = self.configs.assignment_interval_ms(group.group_id)
        return may_assign(group.assignment_timestamp_ms, interval, now_ms)

    def _initial_delay_over(self, group_id: str) -> None:
        """The delay ended: the target of every member that joined meanwhile is computed now."""
        self._initial_delays.pop(group_id, None)
        self.rt.outbox.enter()
        try:
            group = self.groups.get(group_id)
            if group is None or not group.members or group.group_epoch <= group.assignment_epoch:
                return
            records: list[StreamsGroupRecord] = []
            standbys = self.configs.num_standby_replicas(group_id)
            new_target(
                group_id,
                group.members,
                group.target,
                group.configured,
                standbys,
                group.group_epoch,
                self.rt.clock.now_ms(),
                records,
            )
            log.info("streams_group.initial_delay_over", group=group_id, epoch=group.group_epoch)
            self.write(group_id, records, lambda _error: None)
        finally:
            self.rt.outbox.leave()

    def forget(self, group_id: str) -> None:
        """The group's partition moved away (unloaded): none of its timers may fire here."""
        self.timers.cancel_group(group_id)
        self.cancel_initial_delay(group_id)

    def cancel_initial_delay(self, group_id: str) -> None:
        task = self._initial_delays.pop(group_id, None)
        if task is not None:
            task.cancel()

    # -- the topics ------------------------------------------------------------------------------

    def partitions_of(self, topic: str) -> int | None:
        info = self.rt.topics.by_name(topic)
        return None if info is None else info.num_partitions

    def metadata_hash(self, topology: StreamsTopology) -> int:
        """A hash of the metadata of the topics the topology needs (names and partition counts):
        a change means the topology must be checked again."""
        digest = hashlib.blake2b(digest_size=8)
        for name in sorted(topology.required_topics()):
            count = self.partitions_of(name)
            if count is not None:
                digest.update(f"{name}\0{count}\n".encode())
        return int.from_bytes(digest.digest(), "big", signed=True)

    def configure(self, topology: StreamsTopology, metadata_hash: int) -> ConfiguredTopology:
        return configure(topology, self.partitions_of, metadata_hash)

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: StreamsGroupRecord) -> None:
        """Apply one record: the first of a group id creates the group, its metadata tombstone ends it."""
        group = self.groups.get(record.group_id)
        if isinstance(record, StreamsGroupMetadataTombstone):
            if group is not None:
                del self.groups[record.group_id]
                group.dead = True
                self.timers.cancel_group(record.group_id)
                self.cancel_initial_delay(record.group_id)
            return
        if group is None:
            if type(record).__name__.endswith("Tombstone"):
                return
            group = self.groups[record.group_id] = StreamsGroup(record.group_id)
            classic = self.rt.groups.get(record.group_id)
            if classic is not None and classic.size == 0:
                # An empty classic group of that id (committed offsets only) becomes this group.
                del self.rt.groups[record.group_id]
                group.offsets.update(classic.offsets)
                group.pending_offset_commits.update(classic.pending_offset_commits)
        group.replay(record)

    def of_another_type(self, group_id: str) -> bool:
        classic = self.rt.groups.get(group_id)
        return (
            group_id in self.rt.consumer_groups
            or group_id in self.rt.share_groups
            or (classic is not None and classic.size > 0)
        )

    # -- writes ---------------------------------------------------------------------------------

    def write(
        self,
        group_id: str,
        records: Sequence[StreamsGroupRecord],
        done: Callable[[ErrorCode], None],
        configured: ConfiguredTopology | None = None,
    ) -> None:
        """Append the records; once written, replay them (and keep `configured`, the topology as
        checked against the topics) and call `done` with NONE or the append error."""
        # Not in the CoordinatorRecord alias (loading.py's replay never sees them): cast for the sink.
        written = cast("list[CoordinatorRecord]", list(records))

        def respond(error: ErrorCode) -> None:
            if error is ErrorCode.NONE:
                self.apply(group_id, written, configured)
            else:
                log.warning("streams_group.write_failed", group=group_id, error=error.name)
            done(error)

        if not written:
            respond(ErrorCode.NONE)
            return
        self.rt.write(CoordinatorResult(group_id, written, respond))

    def apply(
        self,
        group_id: str,
        records: Sequence[CoordinatorRecord],
        configured: ConfiguredTopology | None = None,
    ) -> None:
        before = Before(self.groups.get(group_id))
        for record in records:
            self.replay(cast("StreamsGroupRecord", record))
        after = self.groups.get(group_id)
        if after is None:
            return
        if configured is not None and after.topology is not None and configured.epoch == after.topology.epoch:
            after.configured = configured
        state = after.state
        if before.state is not state:
            log.info(
                "streams_group.transition",
                group=group_id,
                from_state=before.state.value if before.state else None,
                to_state=state.value,
                epoch=after.group_epoch,
                members=sorted(after.members),
            )
        record_rebalance(self.rt.timeline, before, after, cast("list[StreamsGroupRecord]", records))

    # -- members leaving ------------------------------------------------------------------------

    def removal_records(self, group: StreamsGroup, member_id: str) -> list[StreamsGroupRecord]:
        """Kafka's removeStreamsMember: the member's tombstones and a bump of the group epoch (the
        target assignment is computed again by the next heartbeat)."""
        gid = group.group_id
        return [
            StreamsGroupCurrentAssignmentTombstone(gid, member_id),
            StreamsGroupTargetAssignmentMemberTombstone(gid, member_id),
            StreamsGroupMemberTombstone(gid, member_id),
            StreamsGroupMetadataRecord(
                gid,
                group.group_epoch + 1,
                group.metadata_hash,
                group.validated_topology_epoch,
                group.last_assignment_configs,
            ),
        ]

    def remove(self, group: StreamsGroup, member_id: str, done: Callable[[ErrorCode], None]) -> None:
        self.timers.cancel(group.group_id, member_id)
        self.write(group.group_id, self.removal_records(group, member_id), done)

    def fence(self, group: StreamsGroup, member_id: str, reason: str) -> None:
        """Remove a member whose deadline passed; nobody waits for the answer."""
        log.info("streams_group.member_fenced", group=group.group_id, member=member_id, reason=reason)
        self.rt.timeline.member_left(
            group.group_id, member_id, generation=group.group_epoch, reason=reason, event="member_evicted"
        )
        self.remove(group, member_id, lambda _error: None)

    def _session_expired(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            self.fence(group, member_id, "session timeout expired")

    def _rebalance_expired(self, group_id: str, member_id: str, epoch: int) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if (
            group is not None
            and member is not None
            and member.state is MemberState.UNREVOKED_TASKS
            and member.member_epoch == epoch
        ):
            self.fence(group, member_id, "rebalance timeout expired while revoking tasks")

    def arm_timers(self, group: StreamsGroup, member_id: str) -> None:
        """After a heartbeat was written: the session restarts; a revoking member gets its deadline."""
        member = group.members.get(member_id)
        if member is None:
            self.timers.cancel(group.group_id, member_id)
            return
        self.timers.touch(group.group_id, member_id, self.configs.session_timeout_ms(group.group_id))
        if member.state is MemberState.UNREVOKED_TASKS:
            self.timers.arm_rebalance(
                group.group_id, member_id, member.member_epoch, member.rebalance_timeout_ms
            )
        else:
            self.timers.cancel_rebalance(group.group_id, member_id)

    def on_loaded(self, group_ids: Collection[str]) -> None:
        """Groups replayed from the log: every member's session starts now; topologies are checked
        against the topics again by the next heartbeat."""
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None:
                continue
            if group.topology is not None:
                group.configured = self.configure(group.topology, group.metadata_hash)
            for member_id in group.members:
                self.arm_timers(group, member_id)

    # -- admin ----------------------------------------------------------------------------------

    def delete_records(self, group: StreamsGroup) -> list[StreamsGroupRecord] | ErrorCode:
        """DeleteGroups of a streams group: only an empty one (NON_EMPTY_GROUP otherwise)."""
        if group.state is not StreamsGroupState.EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        return streams_group_tombstones(group)


def streams_group_tombstones(group: StreamsGroup) -> list[StreamsGroupRecord]:
    """Kafka's createGroupTombstoneRecords: each member's tombstones, then the group's (the metadata
    tombstone last: replaying it removes the group)."""
    gid = group.group_id
    records: list[StreamsGroupRecord] = []
    for member_id in sorted(group.members):
        records += [
            StreamsGroupCurrentAssignmentTombstone(gid, member_id),
            StreamsGroupTargetAssignmentMemberTombstone(gid, member_id),
            StreamsGroupMemberTombstone(gid, member_id),
        ]
    records += [
        StreamsGroupTargetAssignmentMetadataTombstone(gid),
        StreamsGroupTopologyTombstone(gid),
        StreamsGroupMetadataTombstone(gid),
    ]
    return records
