"""The group coordinator: one object that owns the groups and routes each request to its part.

Parts (composition, no inheritance): `classic.join`, `classic.sync`, `classic.heartbeat` (liveness),
`classic.leave`, `classic.rebalance` (the phases and their delayed operations), `offset_manager`,
`group_admin` (describe, list, delete) and `loading` (replay, load, unload). They share one `Runtime`
(groups, purgatories, outbox, record sink). KIP-848 consumer groups are the `consumer` subpackage
(`consumer.heartbeat` for ConsumerGroupHeartbeat, `consumer.classic_members` for classic clients
inside them, `consumer.groups` for their records and timers) and KIP-932 share groups the `share`
one, both built on first use (`parts.py`) and routed from here; a classic request for the id of a
consumer group goes there too.

Writes return their records (`records.CoordinatorResult`): the sink appends them to
`__consumer_offsets`, and only then do the answers go out. `replay` applies any record; loading
is a replay of the log, followed by `on_loaded`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import structlog

from kafkito.broker.config import default
from kafkito.broker.coordinator.classic.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync
from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.heartbeat import Liveness
from kafkito.broker.coordinator.classic.join import Join
from kafkito.broker.coordinator.classic.leave import Leave
from kafkito.broker.coordinator.classic.rebalance import Rebalance
from kafkito.broker.coordinator.classic.sync import Sync
from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.group_admin import GroupAdmin
from kafkito.broker.coordinator.loading import Loading
from kafkito.broker.coordinator.offset_manager import OffsetManager
from kafkito.broker.coordinator.outbox import Outbox, entry
from kafkito.broker.coordinator.parts import GroupTypeParts
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
)
from kafkito.broker.coordinator.requests import (
    JoinGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
)
from kafkito.broker.coordinator.results import (
    CommitCallback,
    DescribedGroup,
    GroupOverview,
    JoinCallback,
    JoinGroupResult,
    LeaveGroupResult,
    LeavingMember,
    OffsetAndMetadata,
    PartitionOffset,
    SyncCallback,
    TopicPartition,
)
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.broker.coordinator.sink import InMemoryRecordSink, RecordSink
from kafkito.broker.coordinator.timeline import TimelineEvent
from kafkito.broker.coordinator.txn_commit import TransactionalCommits
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Purgatory, Timer

if TYPE_CHECKING:  # KIP-848 consumer groups: imported with the first one (`parts.py`)
    from kafkito.broker.coordinator.consumer.assignors import Assignor
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup
    from kafkito.broker.coordinator.consumer.group_configs import GroupConfigs
    from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
    from kafkito.broker.coordinator.consumer.results import ConsumerGroupDescription, HeartbeatCallback
    from kafkito.broker.coordinator.consumer.topics import TopicsView

    # KIP-932 share groups: imported with the first one (`parts.py`)
    from kafkito.broker.coordinator.share.config import ShareConfig
    from kafkito.broker.coordinator.share.describe import ShareGroupDescription
    from kafkito.broker.coordinator.share.group import ShareGroup
    from kafkito.broker.coordinator.share.group_configs import ShareGroupConfigs
    from kafkito.broker.coordinator.share.groups import LogOffsets
    from kafkito.broker.coordinator.share.offsets import GroupStartOffsets, TopicResult
    from kafkito.broker.coordinator.share.persister_api import SharePersister
    from kafkito.broker.coordinator.share.requests import ShareHeartbeatCallback, ShareHeartbeatRequest

    # KIP-1071 streams groups: imported with the first one (`parts.py`)
    from kafkito.broker.coordinator.streams.config import (
        GroupConfigsWithStreams,
        StreamsConfig,
        StreamsGroupConfigs,
    )
    from kafkito.broker.coordinator.streams.describe import StreamsGroupDescription
    from kafkito.broker.coordinator.streams.group import StreamsGroup
    from kafkito.broker.coordinator.streams.records import StreamsGroupRecord
    from kafkito.broker.coordinator.streams.requests import StreamsHeartbeatCallback, StreamsHeartbeatRequest

log = structlog.get_logger("kafkito.coordinator")

_DEFAULT_ASSIGNORS = default("group.consumer.assignors")
_STREAMS_RECORDS = "kafkito.broker.coordinator.streams.records"


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
        streams_config: StreamsConfig | None = None,
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
        # A classic group converted to a consumer group: whoever is parked rejoins the new group.
        self._parts = parts = GroupTypeParts(
            rt,
            assignors,
            share_config,
            self._downgraded,
            lambda group: self._loading.retire(
                group, ErrorCode.REBALANCE_IN_PROGRESS, "converted to a consumer group"
            ),
        )
        parts.streams_config = streams_config
        self._loading = Loading(rt, self._liveness, self._rebalance, self._offsets, parts)
        self._admin = GroupAdmin(rt, self._offsets, parts)
        if assignors is None and config.group_consumer_assignors != _DEFAULT_ASSIGNORS:
            parts.consumer  # noqa: B018 - builds it: a bad group.consumer.assignors fails at start
        self._liveness.other_groups = self._classic_member_heartbeat
        # Heartbeat: the hottest call goes straight to liveness, itself an entry (no extra call).
        self.heartbeat: Callable[[str | None, str, str | None, int], ErrorCode] = self._liveness.heartbeat

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
        if request.group_id in self._rt.share_groups or request.group_id in self._rt.streams_groups:
            # A group id names one group: a classic member cannot join a share or streams group.
            self._rt.outbox.send(
                callback, JoinGroupResult(request.member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            )
            return
        consumer = self._consumer_group_of(request.group_id)
        if consumer is not None and consumer.members:
            self._parts.classic_members.join(consumer, request, callback)
        else:
            self._join.join_group(request, callback)

    @entry
    def sync_group(self, request: SyncGroupRequest, callback: SyncCallback) -> None:
        consumer = self._consumer_group_of(request.group_id)
        if consumer is not None:
            self._parts.classic_members.sync(consumer, request, callback)
        else:
            self._sync.sync_group(request, callback)

    @entry
    def leave_group(self, group_id: str | None, members: Sequence[LeavingMember]) -> LeaveGroupResult:
        """LeaveGroup (a batch since v3); member_id "" with an instance id removes that static member."""
        consumer = self._consumer_group_of(group_id)
        if consumer is not None:
            return self._parts.classic_members.leave(consumer, members)
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
        return self._parts.classic_members.heartbeat(consumer, member_id, instance_id, generation_id)

    # -- KIP-848 consumer groups ----------------------------------------------------------------

    @entry
    def consumer_group_heartbeat(
        self, request: ConsumerHeartbeatRequest, callback: HeartbeatCallback
    ) -> None:
        """ConsumerGroupHeartbeat: `callback` gets the result once its records are written (at once
        for an error)."""
        if request.group_id in self._rt.share_groups or request.group_id in self._rt.streams_groups:
            from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult

            message = f"Group {request.group_id} is not a consumer group."
            self._rt.outbox.send(
                callback, ConsumerHeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, message, None, 0, 0, None)
            )
            return
        self._parts.heartbeats.heartbeat(request, callback)

    @entry
    def describe_consumer_groups(self, group_ids: Iterable[str]) -> list[ConsumerGroupDescription]:
        """ConsumerGroupDescribe: GROUP_ID_NOT_FOUND for unknown ids and for classic groups."""
        from kafkito.broker.coordinator.consumer.describe import describe_group

        consumer = self._parts.consumer
        return [
            describe_group(self._rt, group_id, consumer.assignors, consumer.default_assignor)
            for group_id in group_ids
        ]

    # -- KIP-932 share groups -------------------------------------------------------------------

    @entry
    def share_group_heartbeat(self, request: ShareHeartbeatRequest, callback: ShareHeartbeatCallback) -> None:
        """ShareGroupHeartbeat: `callback` gets the result once its records are written (at once for
        an error)."""
        self._parts.share.heartbeat(request, callback)

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
        return self._parts.share_offsets.describe(group_id, topics)

    @entry
    def alter_share_group_offsets(
        self,
        group_id: str,
        topics: Sequence[tuple[str, Sequence[tuple[int, int]]]],
        callback: Callable[[tuple[ErrorCode, str | None, tuple[TopicResult, ...]]], None],
    ) -> None:
        """AlterShareGroupOffsets: (partition, start offset) per topic, on an empty share group (a
        free id becomes one); `callback` gets the answer once its record is written."""
        self._parts.share_offsets.alter(group_id, topics, callback)

    @entry
    def delete_share_group_offsets(
        self, group_id: str, topic_names: Sequence[str]
    ) -> tuple[ErrorCode, str | None, tuple[TopicResult, ...]]:
        """DeleteShareGroupOffsets: an empty share group's state of whole topics."""
        return self._parts.share_offsets.delete(group_id, topic_names)

    def share_group_member_epoch(self, group_id: str, member_id: str) -> int | None:
        """The member's epoch in that share group; None when it is not a member (ShareFetch asks)."""
        return self._parts.share.member_epoch(group_id, member_id)

    def get_share_group(self, group_id: str) -> ShareGroup | None:
        return self._rt.share_groups.get(group_id)

    def share_groups(self) -> list[ShareGroup]:
        return list(self._rt.share_groups.values())

    @property
    def share_group_configs(self) -> ShareGroupConfigs:
        """The share configs of GROUP resources (share.session.timeout.ms, share.auto.offset.reset...)."""
        return self._parts.share.configs

    @property
    def all_group_configs(self) -> GroupConfigsWithStreams:
        """The GROUP config resource: consumer-group, share-group and streams-group configs together."""
        from kafkito.broker.coordinator.share.group_configs import AllGroupConfigs
        from kafkito.broker.coordinator.streams.config import GroupConfigsWithStreams

        others = AllGroupConfigs(self._parts.consumer.configs, self._parts.share.configs)
        return GroupConfigsWithStreams(others, self._parts.streams.configs)

    @property
    def share_persister(self) -> SharePersister | None:
        return self._parts.share.persister

    @share_persister.setter
    def share_persister(self, persister: SharePersister | None) -> None:
        """The share-state persister (S-DATA's), told of partitions a share group starts to consume."""
        self._parts.set_share_persister(persister)

    @property
    def share_log_offsets(self) -> LogOffsets:
        return self._parts.share.log_offsets

    @share_log_offsets.setter
    def share_log_offsets(self, offsets: LogOffsets) -> None:
        """(topic id, partition) -> (log start, log end): where share.auto.offset.reset starts."""
        self._parts.set_share_log_offsets(offsets)

    @property
    def group_configs(self) -> GroupConfigs:
        """The GROUP config resources (consumer.session.timeout.ms, consumer.heartbeat.interval.ms)."""
        return self._parts.consumer.configs

    @entry
    def on_topics_changed(self) -> None:
        """Topics were created, deleted or grew: subscribed groups' epochs are bumped, regexes
        resolved again."""
        self._parts.on_topics_changed()

    # -- KIP-1071 streams groups ----------------------------------------------------------------

    @entry
    def streams_group_heartbeat(
        self, request: StreamsHeartbeatRequest, callback: StreamsHeartbeatCallback
    ) -> None:
        """StreamsGroupHeartbeat: `callback` gets the result once its records are written (at once for
        an error); the result names the internal topics the broker must create."""
        self._parts.streams_heartbeats.heartbeat(request, callback)

    @entry
    def describe_streams_groups(self, group_ids: Iterable[str]) -> list[StreamsGroupDescription]:
        """StreamsGroupDescribe: GROUP_ID_NOT_FOUND for unknown ids and groups of another type."""
        from kafkito.broker.coordinator.streams.describe import describe_streams_group

        return [describe_streams_group(self._rt, group_id) for group_id in group_ids]

    def get_streams_group(self, group_id: str) -> StreamsGroup | None:
        return self._rt.streams_groups.get(group_id)

    def streams_groups(self) -> list[StreamsGroup]:
        return list(self._rt.streams_groups.values())

    @property
    def streams_group_configs(self) -> StreamsGroupConfigs:
        """The streams configs of GROUP resources (streams.num.standby.replicas, ...)."""
        return self._parts.streams.configs

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
        return self._offsets.fetch(group_id, partitions, require_stable, member_id, member_epoch)

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
        return self._admin.describe_groups(group_ids)

    @entry
    def list_groups(
        self, states: Collection[str] = (), types: Collection[str] = ()
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Groups whose state and type match the filters (case-insensitive; empty filter = all)."""
        return self._admin.list_groups(states, types)

    @entry
    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        return self._admin.delete_groups(group_ids)

    # -- records, loading and unloading ---------------------------------------------------------

    def replay(self, record: CoordinatorRecord) -> None:
        """Apply one record to the coordinator's state: at load for every record, at run time for
        offset commits (once written) and tombstones (`loading.py`); streams groups' records go to
        their part."""
        if type(record).__module__ == _STREAMS_RECORDS:
            self._parts.streams.replay(cast("StreamsGroupRecord", record))
            return
        self._loading.replay(record)

    @entry
    def on_loaded(self, group_ids: Iterable[str]) -> None:
        """Serve groups just replayed from the log: arm their members' deadlines, shed excess members."""
        group_ids = list(group_ids)
        self._loading.on_loaded(group_ids)
        if self._parts.has_streams:
            self._parts.streams.on_loaded(group_ids)

    @entry
    def unload_group(self, group_id: str) -> None:
        """Forget a group whose partition moved away: it goes Dead and parked requests get NOT_COORDINATOR."""
        self._loading.unload_group(group_id)
