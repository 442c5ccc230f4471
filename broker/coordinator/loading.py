"""Records into state, and groups in and out of the coordinator: replay, on_loaded, unload, retire.

`replay` is the one way a record changes state, at load for every record and at run time once a
record is written; a restart is therefore a replay. A classic group's records replay only at load,
into a group with no live rebalance state yet (see `records.CoordinatorResult`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.heartbeat import Liveness
from kafkito.broker.coordinator.classic.rebalance import Rebalance
from kafkito.broker.coordinator.classic.snapshot import group_from_record
from kafkito.broker.coordinator.classic.state import AFTER_JOIN, GroupState
from kafkito.broker.coordinator.offset_manager import OffsetManager
from kafkito.broker.coordinator.parts import GroupTypeParts
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.results import JoinGroupResult, SyncGroupResult
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.consumer.records import ConsumerGroupRecord
    from kafkito.broker.coordinator.share.records import ShareGroupRecord

log = structlog.get_logger("kafkito.coordinator")


class Loading:
    """Applies records, serves groups just loaded, forgets groups whose partition moved away."""

    def __init__(
        self,
        rt: Runtime,
        liveness: Liveness,
        rebalance: Rebalance,
        offsets: OffsetManager,
        parts: GroupTypeParts,
    ) -> None:
        self._rt = rt
        self._liveness = liveness
        self._rebalance = rebalance
        self._offsets = offsets
        self._parts = parts

    def replay(self, record: CoordinatorRecord) -> None:
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
            self._parts.consumer.replay(record)  # type: ignore[arg-type]
        elif is_share_group_record(record):
            self._parts.share.replay(record)  # type: ignore[arg-type]
        else:
            self._replay_group(record.group_id, None)

    def _replay_group(self, group_id: str, record: GroupMetadataRecord | None) -> None:
        groups = self._rt.groups
        previous = groups.get(group_id)
        if record is None and (previous is None or not previous.offsets):
            groups.pop(group_id, None)
            return
        groups[group_id] = group_from_record(record, group_id, self._rt.clock.now_ms(), previous)

    def on_loaded(self, group_ids: Iterable[str]) -> None:
        """Serve groups just replayed from the log: arm their members' deadlines, shed excess members."""
        group_ids = list(group_ids)
        if self._parts.has_consumer:
            self._parts.consumer.on_loaded(group_ids)
        if self._parts.has_share:
            self._parts.share.on_loaded(group_ids)
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

    def unload_group(self, group_id: str) -> None:
        """Forget a group whose partition moved away: it goes Dead and parked requests get NOT_COORDINATOR."""
        rt = self._rt
        group = rt.groups.pop(group_id, None)
        rt.txn_offsets.forget_group(group_id)
        consumer_group = rt.consumer_groups.pop(group_id, None)
        share_group = rt.share_groups.pop(group_id, None)
        streams_group = rt.streams_groups.pop(group_id, None)
        if streams_group is not None:
            streams_group.dead = True
            self._parts.streams.forget(group_id)
        if share_group is not None:
            share_group.dead = True
            self._parts.share.timers.cancel_group(group_id)
        if consumer_group is not None:
            consumer_group.dead = True
            self._parts.consumer.timers.cancel_group(group_id)
        if group is not None:
            self.retire(group, ErrorCode.NOT_COORDINATOR, "unloaded")

    def retire(self, group: ClassicGroup, error: ErrorCode, reason: str) -> None:
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
