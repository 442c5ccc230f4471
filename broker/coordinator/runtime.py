"""What the coordinator's parts share: config, clock, groups, purgatories, outbox and the record sink.

`GroupCoordinator` builds one `Runtime` and hands it to each part (classic join, sync, liveness,
leave; offsets). The parts hold no state of their own: everything a restart must rebuild is here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.config import CoordinatorConfig
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics, TopicsView
from kafkito.broker.coordinator.outbox import Outbox
from kafkito.broker.coordinator.records import CoordinatorRecord, CoordinatorResult
from kafkito.broker.coordinator.sink import RecordSink
from kafkito.broker.coordinator.timeline import GroupTimeline
from kafkito.broker.coordinator.txn_offsets import TransactionalOffsets
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Purgatory, Timer

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.delayed import DelayedHeartbeat, DelayedJoin, DelayedSync
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup
    from kafkito.broker.coordinator.share.group import ShareGroup
    from kafkito.broker.coordinator.streams.group import StreamsGroup

log = structlog.get_logger("kafkito.coordinator")


class Runtime:
    """The coordinator's state and the plumbing every part uses (answers, writes, transitions)."""

    __slots__ = (
        "clock",
        "config",
        "consumer_groups",
        "groups",
        "heartbeat_purgatory",
        "outbox",
        "rebalance_purgatory",
        "replay",
        "share_groups",
        "sink",
        "streams_groups",
        "timeline",
        "timer",
        "topics",
        "txn_offsets",
    )

    def __init__(
        self,
        config: CoordinatorConfig,
        clock: Clock,
        timer: Timer,
        sink: RecordSink,
        replay: Callable[[CoordinatorRecord], None],
    ) -> None:
        self.config = config
        self.clock = clock
        self.timer = timer
        self.sink = sink
        self.replay = replay
        self.groups: dict[str, ClassicGroup] = {}
        # KIP-848 consumer groups; a group id names a classic group or a consumer group, never both.
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        # KIP-932 share groups: their ids are in the same namespace.
        self.share_groups: dict[str, ShareGroup] = {}
        # KIP-1071 streams groups: same namespace; they hold their committed offsets, as consumer groups.
        self.streams_groups: dict[str, StreamsGroup] = {}
        self.topics: TopicsView = InMemoryTopics()
        self.txn_offsets = TransactionalOffsets()
        self.outbox = Outbox()
        self.heartbeat_purgatory: Purgatory[DelayedHeartbeat] = Purgatory("Heartbeat", timer)
        self.rebalance_purgatory: Purgatory[DelayedJoin | DelayedSync] = Purgatory("Rebalance", timer)
        # What happened to each group, for tests (kafkito.testing, the control endpoint).
        self.timeline = GroupTimeline(clock, config.group_timeline_max_events)

    # -- writes ---------------------------------------------------------------------------------

    def write(self, result: CoordinatorResult) -> None:
        """Append the result's records; its `respond` runs (as an entry) once the sink answers."""
        self.sink.append(result.group_id, result.records, self.outbox.guard(result.respond))

    def write_tombstones(self, group_id: str, records: Sequence[CoordinatorRecord]) -> None:
        """Apply deletions now and append them without waiting, as Kafka does (acks=0)."""
        if not records:
            return
        for record in records:
            self.replay(record)

        def logged(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                # Nobody waits: the log line is all there is.
                log.warning("group.tombstones_failed", group=group_id, error=error.name)

        self.sink.append(group_id, records, logged)

    # -- groups ---------------------------------------------------------------------------------

    def add_group(self, group: ClassicGroup) -> ClassicGroup:
        existing = self.groups.setdefault(group.group_id, group)
        if existing is group:
            log.info("group.created", group=group.group_id, state=group.state.value)
        return existing

    def get_or_create_group(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        return group if group is not None else self.add_group(ClassicGroup(group_id, self.clock.now_ms()))

    def offsets_of(self, group_id: str) -> ClassicGroup | ConsumerGroup | StreamsGroup | None:
        """The group holding `group_id`'s committed offsets (a consumer or streams group, else a classic
        one; a streams group has the consumer group's offset interface)."""
        consumer = self.consumer_groups.get(group_id) or self.streams_groups.get(group_id)
        return consumer if consumer is not None else self.groups.get(group_id)

    def offsets_of_or_create(self, group_id: str) -> ClassicGroup | ConsumerGroup | StreamsGroup:
        """As `offsets_of`; an unknown id gets a classic (simple) group, as Kafka does for commits."""
        consumer = self.consumer_groups.get(group_id) or self.streams_groups.get(group_id)
        return consumer if consumer is not None else self.get_or_create_group(group_id)

    def transition(self, group: ClassicGroup, state: GroupState, reason: str) -> None:
        previous = group.state
        group.transition_to(state, self.clock.now_ms())
        self.log_transition(group, previous, reason)

    def log_transition(self, group: ClassicGroup, previous: GroupState, reason: str) -> None:
        log.info(
            "group.transition",
            group=group.group_id,
            from_state=previous.value,
            to_state=group.state.value,
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            members=group.member_ids(),
            reason=reason,
        )
        self.timeline.transition(
            group.group_id,
            previous.value,
            group.state.value,
            generation=group.generation_id,
            reason=reason,
            members=group.member_ids(),
            protocol=group.protocol_name,
        )

    def validate_group_status(self, group_id: str | None, allow_empty_id: bool) -> ErrorCode | None:
        if group_id is None or (not allow_empty_id and not group_id):
            return ErrorCode.INVALID_GROUP_ID
        if self.sink.is_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        # This broker coordinates every group, so NOT_COORDINATOR never applies here.
        return None
