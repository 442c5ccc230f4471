"""The sans-io classic group coordinator: Kafka's GroupCoordinator driven by method calls and a clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence

from kafkito.broker.coordinator.base import entry, log
from kafkito.broker.coordinator.delayed import (
    join_key,
    member_key,
)
from kafkito.broker.coordinator.group import (
    AFTER_JOIN,
    Group,
    GroupState,
    IllegalGroupStateError,
)
from kafkito.broker.coordinator.membership import Membership
from kafkito.broker.coordinator.offsets import fetch_offsets
from kafkito.broker.coordinator.results import (
    DEAD_GROUP_SUMMARY,
    EMPTY_GROUP_SUMMARY,
    UNKNOWN_MEMBER_ID,
    CommitCallback,
    DescribedGroup,
    GroupOverview,
    GroupSummary,
    JoinGroupResult,
    OffsetAndMetadata,
    PartitionOffset,
    SyncGroupResult,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode


class GroupCoordinator(Membership):
    """Classic consumer groups: membership, rebalances, liveness and offsets, as Kafka 3.x does them.

    Results of JoinGroup, SyncGroup and OffsetCommit go to callbacks: at once for immediate answers,
    later for parked requests (when their delayed operation completes or the store answers).
    Callbacks never run while the coordinator is mid-change: they are queued and delivered, in
    order, when the outermost call into the coordinator returns.

    Layers, each a module: `base` (state, outbox, validation) < `rebalance` (join/sync phases,
    delayed operations, liveness) < `membership` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
    < this one (loading, admin APIs, offsets).
    """

    @entry
    def load_group(self, group: Group) -> Group:
        """Install a group read back from the store (Stable if it has members, else Empty); arm deadlines."""
        if group.state not in (GroupState.STABLE, GroupState.EMPTY):
            raise IllegalGroupStateError(f"group {group.group_id} cannot load in state {group.state}")
        group = self._add_group(group)
        log.info(
            "group.loaded",
            group=group.group_id,
            state=group.state.value,
            generation=group.generation_id,
            members=group.member_ids(),
        )
        if group.size > self.config.group_max_size:
            self._prepare_rebalance(group, f"loaded group is over capacity ({self.config.group_max_size})")
        for member in group.members():
            self._complete_and_schedule_next_heartbeat(group, member)
        return group

    @entry
    def unload_group(self, group_id: str) -> None:
        """Forget a group whose partition moved away: it goes Dead and parked requests get NOT_COORDINATOR."""
        group = self._groups.pop(group_id, None)
        if group is None:
            return
        previous = group.state
        self._transition(group, GroupState.DEAD, "unloaded")
        if previous is GroupState.PREPARING_REBALANCE:
            for member in group.members():
                self._reply_join(group, member, JoinGroupResult(member.member_id, ErrorCode.NOT_COORDINATOR))
            self.rebalance_purgatory.check_and_complete(join_key(group_id))
        elif previous in AFTER_JOIN:
            for member in group.members():
                self._reply_sync(member, SyncGroupResult(ErrorCode.NOT_COORDINATOR))
                self.heartbeat_purgatory.check_and_complete(member_key(group_id, member.member_id))
        self._remove_sync_expiration(group)

    # -- admin: DescribeGroups, ListGroups, DeleteGroups -------------------------------------------

    @entry
    def describe_groups(self, group_ids: Iterable[str]) -> list[DescribedGroup]:
        described = []
        for group_id in group_ids:
            error = self._validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                described.append(DescribedGroup(group_id, error, EMPTY_GROUP_SUMMARY))
                continue
            group = self._groups.get(group_id)
            summary = DEAD_GROUP_SUMMARY if group is None else self._summary(group)
            described.append(DescribedGroup(group_id, ErrorCode.NONE, summary))
        return described

    @staticmethod
    def _summary(group: Group) -> GroupSummary:
        if group.is_(GroupState.STABLE) and group.protocol_name is not None:
            protocol = group.protocol_name
            return GroupSummary(
                group.state.value,
                group.protocol_type or "",
                protocol,
                tuple(m.summary(protocol) for m in group.members()),
            )
        return GroupSummary(
            group.state.value,
            group.protocol_type or "",
            "",
            tuple(m.summary_without_metadata() for m in group.members()),
        )

    @entry
    def list_groups(
        self, states: Collection[str] = (), types: Collection[str] = ()
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Groups whose state and type match the filters (case-insensitive; empty filter = all)."""
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.store.is_any_loading() else ErrorCode.NONE
        if types and "classic" not in {t.lower() for t in types}:
            return error, []
        wanted = {s.lower() for s in states}
        overviews = [
            GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._groups.values()
            if not wanted or g.state.value.lower() in wanted
        ]
        return error, overviews

    @entry
    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            error = self._validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                errors[group_id] = error
                continue
            group = self._groups.get(group_id)
            if group is None or group.is_(GroupState.DEAD):
                errors[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif group.is_(GroupState.EMPTY):
                self._transition(group, GroupState.DEAD, "deleted by DeleteGroups")
                removed = group.remove_offsets(list(group.offsets))
                del self._groups[group_id]
                self.store.write_tombstones(group, list(removed), group.generation_id > 0)
                log.info("group.deleted", group=group_id, offsets_removed=len(removed))
                errors[group_id] = ErrorCode.NONE
            else:
                errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        return errors

    # -- offsets --------------------------------------------------------------------------------

    @entry
    def commit_offsets(
        self,
        group_id: str | None,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """OffsetCommit: validates the member and generation, then writes through the store."""
        error = self._validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            self._send(callback, dict.fromkeys(offsets, error))
            return
        assert group_id is not None
        now = self.clock.now_ms()
        stamped = {
            tp: o if o.commit_timestamp_ms >= 0 else dataclasses.replace(o, commit_timestamp_ms=now)
            for tp, o in offsets.items()
        }
        group = self._groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                # A member of a generation this coordinator never saw: reject.
                self._send(callback, dict.fromkeys(offsets, ErrorCode.ILLEGAL_GENERATION))
                return
            # Not using Kafka for membership (simple consumer or admin client): allow the commit.
            group = self._add_group(Group(group_id, now))
        error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            self._send(callback, dict.fromkeys(offsets, error))
            return
        state = group.state
        if state is GroupState.EMPTY:
            self._offsets.store(self.store, group, stamped, callback)
        elif state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # Allowed while preparing: the heartbeat response tells the member about the rebalance.
            self._complete_and_schedule_next_heartbeat(group, group.get(member_id))
            self._offsets.store(self.store, group, stamped, callback)
        elif state is GroupState.COMPLETING_REBALANCE:
            self._send(callback, dict.fromkeys(offsets, ErrorCode.REBALANCE_IN_PROGRESS))
        else:
            raise IllegalGroupStateError(f"OffsetCommit reached group {group_id} in {state}")

    def _validate_offset_commit(
        self, group: Group, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        if group.is_(GroupState.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self._validate_current_member(group, member_id, group_instance_id)
            if error is not None:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            return None
        if not group.is_(GroupState.EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit to a non-empty group
        return None

    @entry
    def fetch_offsets(
        self,
        group_id: str | None,
        partitions: Sequence[TopicPartition] | None = None,
        require_stable: bool = False,
    ) -> tuple[ErrorCode, dict[TopicPartition, PartitionOffset]]:
        """OffsetFetch of one group (all committed partitions when `partitions` is None)."""
        error = self._validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            return error, {}
        assert group_id is not None
        return ErrorCode.NONE, fetch_offsets(self._groups.get(group_id), partitions, require_stable)

    @entry
    def delete_offsets(
        self, group_id: str | None, partitions: Sequence[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: allowed on Empty groups, and on consumer groups for topics nobody subscribes to."""
        error = self._validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return error, {}
        assert group_id is not None
        group = self._groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        results: dict[TopicPartition, ErrorCode] = {}
        if group.is_(GroupState.EMPTY):
            eligible = list(partitions)
        elif group.is_consumer_group:
            eligible = []
            for tp in partitions:
                if group.is_subscribed_to_topic(tp.topic):
                    results[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    eligible.append(tp)
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        if eligible:
            removed = group.remove_offsets(eligible)
            self.store.write_tombstones(group, list(removed), False)
            log.info("group.offsets_deleted", group=group_id, partitions=[list(tp) for tp in eligible])
            for tp in eligible:
                results[tp] = ErrorCode.NONE
        return ErrorCode.NONE, results

    @entry
    def expire_offsets(self, group_id: str, partitions: Collection[TopicPartition]) -> bool:
        """Drop offsets found expired (`broker.offsets.expiry`); an Empty group left with none goes Dead.

        Tombstones go out for the removed offsets, and for the group record if it ever had a
        generation. Returns True when the group died.
        """
        group = self._groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return False
        removed = group.remove_offsets(partitions)
        dead = group.is_(GroupState.EMPTY) and not group.has_offsets()
        if dead:
            self._transition(group, GroupState.DEAD, "no offsets left after expiry")
            del self._groups[group_id]
        if removed or dead:
            self.store.write_tombstones(group, list(removed), dead and group.generation_id > 0)
            log.info("group.offsets_expired", group=group_id, partitions=len(removed), dead=dead)
        return dead
