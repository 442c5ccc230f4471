"""The group coordinator: one object that owns the groups and routes each request to its part.

Parts (composition, no inheritance): `classic.join`, `classic.sync`, `classic.heartbeat` (liveness),
`classic.leave`, `classic.rebalance` (the phases and their delayed operations) and `offset_manager`.
They share one `Runtime` (groups, purgatories, outbox, record sink). KIP-848 consumer groups are
the `consumer` subpackage (`consumer.heartbeat` for ConsumerGroupHeartbeat, `consumer.classic_members`
for classic clients inside them, `consumer.groups` for their records and timers), routed from here;
a classic request for the id of a consumer group goes there too.

Writes return their records (`records.CoordinatorResult`): the sink appends them to
`__consumer_offsets`, and only then do the answers go out. `replay` applies any record; loading
is a replay of the log, followed by `on_loaded`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.config import default
from kafkito.broker.coordinator.classic.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync
from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.heartbeat import Liveness
from kafkito.broker.coordinator.classic.join import Join
from kafkito.broker.coordinator.classic.leave import Leave
from kafkito.broker.coordinator.classic.rebalance import Rebalance
from kafkito.broker.coordinator.classic.snapshot import group_from_record
from kafkito.broker.coordinator.classic.state import AFTER_JOIN, GroupState
from kafkito.broker.coordinator.classic.sync import Sync
from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.offset_manager import OffsetManager
from kafkito.broker.coordinator.outbox import Outbox, entry
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.requests import (
    JoinGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
)
from kafkito.broker.coordinator.results import (
    DEAD_GROUP_SUMMARY,
    EMPTY_GROUP_SUMMARY,
    CommitCallback,
    DescribedGroup,
    GroupOverview,
    GroupSummary,
    JoinCallback,
    JoinGroupResult,
    LeaveGroupResult,
    LeavingMember,
    OffsetAndMetadata,
    PartitionOffset,
    SyncCallback,
    SyncGroupResult,
    TopicPartition,
)
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.broker.coordinator.sink import InMemoryRecordSink, RecordSink
from kafkito.broker.coordinator.timeline import TimelineEvent
from kafkito.broker.coordinator.txn_commit import TransactionalCommits
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Purgatory, Timer

if TYPE_CHECKING:  # KIP-848 consumer groups: imported with the first one (`_consumer`)
    from kafkito.broker.coordinator.consumer.assignors import Assignor
    from kafkito.broker.coordinator.consumer.classic_members import ClassicMembers
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup
    from kafkito.broker.coordinator.consumer.group_configs import GroupConfigs
    from kafkito.broker.coordinator.consumer.groups import ConsumerGroups
    from kafkito.broker.coordinator.consumer.heartbeat import Heartbeats
    from kafkito.broker.coordinator.consumer.records import ConsumerGroupRecord
    from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
    from kafkito.broker.coordinator.consumer.results import ConsumerGroupDescription, HeartbeatCallback
    from kafkito.broker.coordinator.consumer.topics import TopicsView

    # KIP-932 share groups: imported with the first one (`_share`)
    from kafkito.broker.coordinator.share.config import ShareConfig
    from kafkito.broker.coordinator.share.describe import ShareGroupDescription
    from kafkito.broker.coordinator.share.group import ShareGroup
    from kafkito.broker.coordinator.share.group_configs import AllGroupConfigs, ShareGroupConfigs
    from kafkito.broker.coordinator.share.groups import LogOffsets, ShareGroups
    from kafkito.broker.coordinator.share.offsets import GroupStartOffsets, ShareOffsets, TopicResult
    from kafkito.broker.coordinator.share.persister_api import SharePersister
    from kafkito.broker.coordinator.share.records import ShareGroupRecord
    from kafkito.broker.coordinator.share.requests import ShareHeartbeatCallback, ShareHeartbeatRequest

log = structlog.get_logger("kafkito.coordinator")

_DEFAULT_ASSIGNORS = default("group.consumer.assignors")


class GroupCoordinator:
    """Classic and KIP-848 consumer groups: membership, rebalances, liveness and offsets, as Kafka.

    Results of JoinGroup, SyncGroup and OffsetCommit go to callbacks: at once for immediate answers,
    later for parked requests (when their delayed operation completes or the append is answered).
    Callbacks never run while the coordinator is mid-change: every public method is an entry of the
    one `Outbox`, which delivers them in order when the outermost entry returns.
    """

    def __init__(
        self,
        config: CoordinatorConfig,
        clock: Clock,
        timer: Timer,
        sink: RecordSink | None = None,
        *,
        topics: TopicsView | None = None,
        assignors: Mapping[str, Assignor] | None = None,
        share_config: ShareConfig | Callable[[], ShareConfig] | None = None,
    ) -> None:
        self._rt = rt = Runtime(
            config, clock, timer, sink if sink is not None else InMemoryRecordSink(), self.replay
        )
        self.outbox: Outbox = rt.outbox
        self._liveness = Liveness(rt)
        self._rebalance = Rebalance(rt, self._liveness)
        self._liveness.bind(self._rebalance)
        self._join = Join(rt, self._rebalance, self._liveness)
        self._sync = Sync(rt, self._rebalance, self._liveness)
        self._leave = Leave(rt, self._rebalance, self._liveness)
        self._offsets = OffsetManager(rt, self._liveness)
        self._txn = TransactionalCommits(rt)
        if topics is not None:
            rt.topics = topics
        self._assignors = assignors
        self._topics_changes = 0  # counted until the consumer-group part exists (its topics version)
        if assignors is None and config.group_consumer_assignors != _DEFAULT_ASSIGNORS:
            self._consumer  # noqa: B018 - builds it: a bad group.consumer.assignors fails at start
        self._share_config = share_config
        self._share_persister: SharePersister | None = None  # handed to the share part when built
        self._share_log_offsets: LogOffsets | None = None
        self._liveness.other_groups = self._classic_member_heartbeat
        # Heartbeat: the hottest call goes straight to liveness, itself an entry (no extra call).
        self.heartbeat: Callable[[str | None, str, str | None, int], ErrorCode] = self._liveness.heartbeat

    # -- KIP-848 consumer groups, built on first use ----------------------------------------------

    @cached_property
    def _consumer(self) -> ConsumerGroups:
        """Built by the first consumer-group request or record (or GROUP config): a broker with no
        consumer group never imports `consumer/` (~25 modules, ~5 ms of every start)."""
        from kafkito.broker.coordinator.consumer.groups import ConsumerGroups

        consumer = ConsumerGroups(self._rt, self._assignors)
        consumer.topics_version = self._topics_changes
        consumer.on_downgraded = self._downgraded
        # A classic group converted to a consumer group: whoever is parked rejoins the new group.
        consumer.on_upgraded = lambda group: self._retire(
            group, ErrorCode.REBALANCE_IN_PROGRESS, "converted to a consumer group"
        )
        return consumer

    @cached_property
    def _heartbeats(self) -> Heartbeats:
        from kafkito.broker.coordinator.consumer.heartbeat import Heartbeats

        return Heartbeats(self._rt, self._consumer)

    @cached_property
    def _classic_members(self) -> ClassicMembers:
        from kafkito.broker.coordinator.consumer.classic_members import ClassicMembers

        return ClassicMembers(self._rt, self._consumer)

    @property
    def _has_consumer_part(self) -> bool:
        return "_consumer" in self.__dict__

    # -- KIP-932 share groups, built on first use -----------------------------------------------

    @cached_property
    def _share(self) -> ShareGroups:
        """Built by the first share-group request or record (or GROUP config), as `_consumer` is."""
        from kafkito.broker.coordinator.share.groups import ShareGroups

        config = self._share_config
        share = ShareGroups(self._rt, config() if callable(config) else config)
        share.persister = self._share_persister
        if self._share_log_offsets is not None:
            share.log_offsets = self._share_log_offsets
        return share

    @cached_property
    def _share_offsets(self) -> ShareOffsets:
        from kafkito.broker.coordinator.share.offsets import ShareOffsets

        return ShareOffsets(self._rt, self._share)

    @property
    def _has_share_part(self) -> bool:
        return "_share" in self.__dict__

    # -- what the coordinator runs on -----------------------------------------------------------

    @property
    def config(self) -> CoordinatorConfig:
        return self._rt.config

    @property
    def clock(self) -> Clock:
        return self._rt.clock

    @property
    def sink(self) -> RecordSink:
        return self._rt.sink

    @sink.setter
    def sink(self, sink: RecordSink) -> None:
        """Where records go (the broker sets the `__consumer_offsets` sink before loading)."""
        self._rt.sink = sink

    @property
    def topics(self) -> TopicsView:
        return self._rt.topics

    @topics.setter
    def topics(self, topics: TopicsView) -> None:
        """The topics consumer groups subscribe to (the broker sets its view before loading)."""
        self._rt.topics = topics

    @property
    def heartbeat_purgatory(self) -> Purgatory[DelayedHeartbeat]:
        return self._rt.heartbeat_purgatory

    @property
    def rebalance_purgatory(self) -> Purgatory[DelayedJoin | DelayedSync]:
        return self._rt.rebalance_purgatory

    def get_group(self, group_id: str) -> ClassicGroup | None:
        return self._rt.groups.get(group_id)

    def groups(self) -> list[ClassicGroup]:
        return list(self._rt.groups.values())

    def get_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self._rt.consumer_groups.get(group_id)

    def consumer_groups(self) -> list[ConsumerGroup]:
        return list(self._rt.consumer_groups.values())

    def group_timeline(self, group_id: str) -> list[TimelineEvent]:
        """What the coordinator recorded for the group, oldest first (`broker.coordinator.timeline`)."""
        return self._rt.timeline.events(group_id)

    # -- member requests ------------------------------------------------------------------------

    @entry
    def join_group(self, request: JoinGroupRequest, callback: JoinCallback) -> None:
        if request.group_id in self._rt.share_groups:
            # A group id names one group: a classic member cannot join a share group.
            self._rt.outbox.send(
                callback, JoinGroupResult(request.member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            )
            return
        consumer = self._consumer_group_of(request.group_id)
        if consumer is not None and consumer.members:
            self._classic_members.join(consumer, request, callback)
        else:
            self._join.join_group(request, callback)

    @entry
    def sync_group(self, request: SyncGroupRequest, callback: SyncCallback) -> None:
        consumer = self._consumer_group_of(request.group_id)
        if consumer is not None:
            self._classic_members.sync(consumer, request, callback)
        else:
            self._sync.sync_group(request, callback)

    @entry
    def leave_group(self, group_id: str | None, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        """LeaveGroup (a batch since v3); member_id "" with an instance id removes that static member."""
        consumer = self._consumer_group_of(group_id)
        if consumer is not None:
            return self._classic_members.leave(consumer, members)
        return self._leave.leave_group(group_id, members)

    def _consumer_group_of(self, group_id: str | None) -> ConsumerGroup | None:
        """The consumer group a classic request goes to (none while its partition loads: the
        classic path answers that)."""
        if not group_id:
            return None
        consumer = self._rt.consumer_groups.get(group_id)
        return None if consumer is None or self._rt.sink.is_loading(group_id) else consumer

    def _downgraded(self, group_id: str) -> None:
        """A consumer group turned back into a classic one: sessions start, and everyone rejoins."""
        group = self._rt.groups.get(group_id)
        if group is None:
            return
        for member in group.members():
            self._liveness.complete_and_schedule_next_heartbeat(group, member)
        self._rebalance.prepare_rebalance(group, "converted from a consumer group")

    def _classic_member_heartbeat(
        self, group_id: str, member_id: str, instance_id: str | None, generation_id: int
    ) -> ErrorCode | None:
        consumer = self._rt.consumer_groups.get(group_id)
        if consumer is None:
            return None
        return self._classic_members.heartbeat(consumer, member_id, instance_id, generation_id)

    # -- KIP-848 consumer groups ----------------------------------------------------------------

    @entry
    def consumer_group_heartbeat(
        self, request: ConsumerHeartbeatRequest, callback: HeartbeatCallback
    ) -> None:
        """ConsumerGroupHeartbeat: `callback` gets the result once its records are written (at once
        for an error)."""
        if request.group_id in self._rt.share_groups:
            from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult

            message = f"Group {request.group_id} is not a consumer group."
            self._rt.outbox.send(
                callback, ConsumerHeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, message, None, 0, 0, None)
            )
            return
        self._heartbeats.heartbeat(request, callback)

    @entry
    def describe_consumer_groups(self, group_ids: Iterable[str]) -> list[ConsumerGroupDescription]:
        """ConsumerGroupDescribe: GROUP_ID_NOT_FOUND for unknown ids and for classic groups."""
        from kafkito.broker.coordinator.consumer.describe import describe_group

        consumer = self._consumer
        return [
            describe_group(self._rt, group_id, consumer.assignors, consumer.default_assignor)
            for group_id in group_ids
        ]

    # -- KIP-932 share groups -------------------------------------------------------------------

    @entry
    def share_group_heartbeat(self, request: ShareHeartbeatRequest, callback: ShareHeartbeatCallback) -> None:
        """ShareGroupHeartbeat: `callback` gets the result once its records are written (at once for
        an error)."""
        self._share.heartbeat(request, callback)

    @entry
    def describe_share_groups(self, group_ids: Iterable[str]) -> list[ShareGroupDescription]:
        """ShareGroupDescribe: GROUP_ID_NOT_FOUND for unknown ids and groups of another type."""
        from kafkito.broker.coordinator.share.describe import describe_share_group

        return [describe_share_group(self._rt, group_id) for group_id in group_ids]

    @entry
    def describe_share_group_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None
    ) -> GroupStartOffsets:
        """DescribeShareGroupOffsets of one group (topics None: every partition it has state for)."""
        return self._share_offsets.describe(group_id, topics)

    @entry
    def alter_share_group_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[tuple[int, int]]]]
    ) -> tuple[ErrorCode, str | None, tuple[TopicResult, ...]]:
        """AlterShareGroupOffsets: (partition, start offset) per topic, on an empty share group."""
        return self._share_offsets.alter(group_id, topics)

    @entry
    def delete_share_group_offsets(
        self, group_id: str, topic_names: Sequence[str]
    ) -> tuple[ErrorCode, str | None, tuple[TopicResult, ...]]:
        """DeleteShareGroupOffsets: an empty share group's state of whole topics."""
        return self._share_offsets.delete(group_id, topic_names)

    def share_group_member_epoch(self, group_id: str, member_id: str) -> int | None:
        """The member's epoch in that share group; None when it is not a member (ShareFetch asks)."""
        return self._share.member_epoch(group_id, member_id)

    def get_share_group(self, group_id: str) -> ShareGroup | None:
        return self._rt.share_groups.get(group_id)

    def share_groups(self) -> list[ShareGroup]:
        return list(self._rt.share_groups.values())

    @property
    def share_group_configs(self) -> ShareGroupConfigs:
        """The share configs of GROUP resources (share.session.timeout.ms, share.auto.offset.reset...)."""
        return self._share.configs

    @property
    def all_group_configs(self) -> AllGroupConfigs:
        """The GROUP config resource: consumer-group and share-group configs together."""
        from kafkito.broker.coordinator.share.group_configs import AllGroupConfigs

        return AllGroupConfigs(self._consumer.configs, self._share.configs)

    @property
    def share_persister(self) -> SharePersister | None:
        return self._share.persister

    @share_persister.setter
    def share_persister(self, persister: SharePersister | None) -> None:
        """The share-state persister (S-DATA's), told of partitions a share group starts to consume."""
        self._share_persister = persister
        if self._has_share_part:
            self._share.persister = persister

    @property
    def share_log_offsets(self) -> LogOffsets:
        return self._share.log_offsets

    @share_log_offsets.setter
    def share_log_offsets(self, offsets: LogOffsets) -> None:
        """(topic id, partition) -> (log start, log end): where share.auto.offset.reset starts."""
        self._share_log_offsets = offsets
        if self._has_share_part:
            self._share.log_offsets = offsets

    @property
    def group_configs(self) -> GroupConfigs:
        """The GROUP config resources (consumer.session.timeout.ms, consumer.heartbeat.interval.ms)."""
        return self._consumer.configs

    @entry
    def on_topics_changed(self) -> None:
        """Topics were created, deleted or grew: subscribed groups' epochs are bumped, regexes
        resolved again."""
        if self._has_consumer_part:
            self._consumer.on_topics_changed()
        else:
            self._topics_changes += 1
        if self._has_share_part:
            self._share.on_topics_changed()

    # -- offsets --------------------------------------------------------------------------------

    @entry
    def commit_offsets(self, request: OffsetCommitRequest, callback: CommitCallback) -> None:
        """OffsetCommit: validates the member and generation; answers once the records are written."""
        self._offsets.commit(request, callback)

    @entry
    def commit_transactional_offsets(self, request: TxnOffsetCommitRequest, callback: CommitCallback) -> None:
        """TxnOffsetCommit: the offsets are written in the producer's transaction and stay pending
        (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT) until its marker."""
        self._txn.commit(request, callback)

    @entry
    def complete_transaction(
        self,
        offsets_partition: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        done: Callable[[ErrorCode], None],
    ) -> None:
        """Write the producer's COMMIT or ABORT marker to that `__consumer_offsets` partition, then
        commit or drop its pending offsets in every group of the partition; `done` gets the append's
        error (NONE once written)."""
        self._txn.complete(offsets_partition, producer_id, producer_epoch, commit, done)

    def offsets_partition_for(self, group_id: str) -> int:
        """The `__consumer_offsets` partition of the group (AddOffsetsToTxn adds it to the transaction)."""
        return self._rt.sink.partition_for(group_id)

    def pending_transactional_offsets(
        self, group_id: str
    ) -> dict[int, dict[TopicPartition, OffsetAndMetadata]]:
        """The group's offsets waiting for their transaction's marker, by producer id."""
        return self._rt.txn_offsets.pending_of(group_id)

    @entry
    def fetch_offsets(
        self,
        group_id: str | None,
        partitions: Sequence[TopicPartition] | None = None,
        require_stable: bool = False,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[ErrorCode, dict[TopicPartition, PartitionOffset]]:
        """OffsetFetch of one group (all committed partitions when `partitions` is None). A member of a
        consumer group (v9: member id and epoch) must be known and at its epoch."""
        consumer = self._rt.consumer_groups.get(group_id) if group_id is not None else None
        if consumer is not None and member_id is not None and member_epoch != -1:
            failure = consumer.validate_offset_fetch(member_id, member_epoch)
            if failure is not None:
                return failure, {}
        return self._offsets.fetch(group_id, partitions, require_stable)

    @entry
    def delete_offsets(
        self, group_id: str | None, partitions: Sequence[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: allowed on Empty groups, and on consumer groups for topics nobody subscribes to."""
        return self._offsets.delete(group_id, partitions)

    @entry
    def expire_offsets(self, group_id: str, partitions: Collection[TopicPartition]) -> bool:
        """Drop offsets found expired; an Empty group left with none goes Dead (returns True)."""
        return self._offsets.expire(group_id, partitions)

    # -- admin: DescribeGroups, ListGroups, DeleteGroups -----------------------------------------

    @entry
    def describe_groups(self, group_ids: Iterable[str]) -> list[DescribedGroup]:
        described = []
        for group_id in group_ids:
            error = self._rt.validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                described.append(DescribedGroup(group_id, error, EMPTY_GROUP_SUMMARY))
                continue
            group = self._rt.groups.get(group_id)
            summary = DEAD_GROUP_SUMMARY if group is None else _summary(group)
            described.append(DescribedGroup(group_id, ErrorCode.NONE, summary))
        return described

    @entry
    def list_groups(
        self, states: Collection[str] = (), types: Collection[str] = ()
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Groups whose state and type match the filters (case-insensitive; empty filter = all)."""
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self._rt.sink.is_any_loading() else ErrorCode.NONE
        kinds = {t.lower() for t in types}
        wanted = {s.lower() for s in states}
        overviews = []
        if not kinds or "classic" in kinds:
            overviews = [
                GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
                for g in self._rt.groups.values()
                if not wanted or g.state.value.lower() in wanted
            ]
        if not kinds or "consumer" in kinds:
            overviews += [
                GroupOverview(g.group_id, "consumer", g.state.value, "consumer")
                for g in self._rt.consumer_groups.values()
                if not wanted or g.state.value.lower() in wanted
            ]
        if not kinds or "share" in kinds:
            overviews += [
                GroupOverview(g.group_id, "share", g.state.value, "share")
                for g in self._rt.share_groups.values()
                if not wanted or g.state.value.lower() in wanted
            ]
        return error, overviews

    @entry
    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            error = self._rt.validate_group_status(group_id, allow_empty_id=True)
            group = self._rt.groups.get(group_id)
            if error is not None:
                errors[group_id] = error
            elif group_id in self._rt.consumer_groups:
                errors[group_id] = self._offsets.delete_consumer_group(self._rt.consumer_groups[group_id])
            elif group_id in self._rt.share_groups:
                errors[group_id] = self._share.delete_group(self._rt.share_groups[group_id])
            elif group is None or group.is_(GroupState.DEAD):
                errors[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif group.is_(GroupState.EMPTY):
                self._rt.transition(group, GroupState.DEAD, "deleted by DeleteGroups")
                del self._rt.groups[group_id]
                partitions = {*group.offsets, *self._rt.txn_offsets.pending_partitions(group_id)}
                removed = self._offsets.delete_offsets(
                    group, list(partitions), group_tombstone=group.generation_id > 0
                )
                log.info("group.deleted", group=group_id, offsets_removed=removed)
                errors[group_id] = ErrorCode.NONE
            else:
                errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        return errors

    # -- records, loading and unloading ---------------------------------------------------------

    def replay(self, record: CoordinatorRecord) -> None:
        """Apply one record to the coordinator's state: at load for every record, at run time for
        offset commits (once written) and tombstones. Group records replay only at load, into a
        group with no live rebalance state yet (see `records.CoordinatorResult`)."""
        if isinstance(record, OffsetCommitRecord):
            self._offsets.replay_commit(record)
        elif isinstance(record, OffsetTombstone):
            self._offsets.replay_tombstone(record)
        elif isinstance(record, TxnOffsetCommitRecord):
            self._offsets.replay_txn_commit(record)
        elif isinstance(record, TransactionMarker):
            self._offsets.replay_marker(record)
        elif isinstance(record, GroupMetadataRecord):
            self._replay_group(record.group_id, record)
        elif isinstance(record, GroupTombstone):
            self._replay_group(record.group_id, None)
        else:
            self._replay_group_type(record)

    def _replay_group_type(self, record: ConsumerGroupRecord | ShareGroupRecord) -> None:
        """A consumer or share group's record: their formats are imported by the first one met."""
        from kafkito.broker.coordinator.consumer.records import CONSUMER_GROUP_RECORD_TYPES
        from kafkito.broker.coordinator.share.records import is_share_group_record

        if isinstance(record, CONSUMER_GROUP_RECORD_TYPES):
            self._consumer.replay(record)  # type: ignore[arg-type]
        elif is_share_group_record(record):
            self._share.replay(record)  # type: ignore[arg-type]
        else:
            self._replay_group(record.group_id, None)

    def _replay_group(self, group_id: str, record: GroupMetadataRecord | None) -> None:
        groups = self._rt.groups
        previous = groups.get(group_id)
        if record is None and (previous is None or not previous.offsets):
            groups.pop(group_id, None)
            return
        groups[group_id] = group_from_record(record, group_id, self._rt.clock.now_ms(), previous)

    @entry
    def on_loaded(self, group_ids: Iterable[str]) -> None:
        """Serve groups just replayed from the log: arm their members' deadlines, shed excess members."""
        group_ids = list(group_ids)
        if self._has_consumer_part:
            self._consumer.on_loaded(group_ids)
        if self._has_share_part:
            self._share.on_loaded(group_ids)
        max_size = self._rt.config.group_max_size
        for group_id in group_ids:
            group = self._rt.groups.get(group_id)
            if group is None:
                continue
            log.info(
                "group.loaded",
                group=group_id,
                state=group.state.value,
                generation=group.generation_id,
                members=group.member_ids(),
            )
            if group.size > max_size:
                self._rebalance.prepare_rebalance(group, f"loaded group is over capacity ({max_size})")
            for member in group.members():
                self._liveness.complete_and_schedule_next_heartbeat(group, member)

    @entry
    def unload_group(self, group_id: str) -> None:
        """Forget a group whose partition moved away: it goes Dead and parked requests get NOT_COORDINATOR."""
        group = self._rt.groups.pop(group_id, None)
        self._rt.txn_offsets.forget_group(group_id)
        consumer_group = self._rt.consumer_groups.pop(group_id, None)
        share_group = self._rt.share_groups.pop(group_id, None)
        if share_group is not None:
            share_group.dead = True
            self._share.timers.cancel_group(group_id)
        if consumer_group is not None:
            consumer_group.dead = True
            self._consumer.timers.cancel_group(group_id)
        if group is not None:
            self._retire(group, ErrorCode.NOT_COORDINATOR, "unloaded")

    def _retire(self, group: ClassicGroup, error: ErrorCode, reason: str) -> None:
        """A classic group goes Dead: its parked joins and syncs get `error`, its timers end."""
        previous = group.state
        self._rt.transition(group, GroupState.DEAD, reason)
        if previous is GroupState.PREPARING_REBALANCE:
            for member in group.members():
                self._rebalance.reply_join(group, member, JoinGroupResult(member.member_id, error))
            self._rebalance.check_join(group)
        elif previous in AFTER_JOIN:
            for member in group.members():
                self._rebalance.reply_sync(member, SyncGroupResult(error))
                self._liveness.check_session(group, member.member_id)
        self._rebalance.remove_sync_expiration(group)


def _summary(group: ClassicGroup) -> GroupSummary:
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
