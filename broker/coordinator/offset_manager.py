"""Committed offsets (Kafka's OffsetMetadataManager): commit, fetch, delete, expire, and their replay.

A commit is staged on the group (pending, so `require_stable` fetches see it in flight), written as
offset commit records, and applied by replaying those records once the append succeeded. Deletions
and expiry write tombstones, replayed as they are written. Loading replays the same records.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import partial
from typing import TYPE_CHECKING, TypeAlias, cast

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.errors import offset_write_error
from kafkito.broker.coordinator.records import (
    CoordinatorRecord,
    CoordinatorResult,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TransactionMarker,
    TxnOffsetCommitRecord,
)
from kafkito.broker.coordinator.requests import (
    MEMBER_EPOCH_COMMIT_VERSION,
    OffsetCommitRequest,
    TxnOffsetCommitRequest,
)
from kafkito.broker.coordinator.results import (
    NO_OFFSET,
    CommitCallback,
    OffsetAndMetadata,
    PartitionOffset,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.classic.heartbeat import Liveness
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup
    from kafkito.broker.coordinator.runtime import Runtime
    from kafkito.broker.coordinator.streams.group import StreamsGroup

log = structlog.get_logger("kafkito.coordinator")

OffsetGroup: TypeAlias = "ClassicGroup | ConsumerGroup | StreamsGroup"
"""Who holds committed offsets: a classic group, a KIP-848 consumer group or a KIP-1071 streams group
(any group that is not a `ClassicGroup`: their modules are imported with the first such group, not at
start)."""

_NO_OFFSET_FETCHED = PartitionOffset(NO_OFFSET, "", -1, ErrorCode.NONE)
_UNSTABLE = PartitionOffset(NO_OFFSET, "", -1, ErrorCode.UNSTABLE_OFFSET_COMMIT)


def _group_tombstones(group: ConsumerGroup | StreamsGroup) -> list[CoordinatorRecord]:
    # Each type's module is loaded with its first group.
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup

    if isinstance(group, ConsumerGroup):
        from kafkito.broker.coordinator.consumer.groups import group_tombstones

        return group_tombstones(group)
    from kafkito.broker.coordinator.streams.groups import streams_group_tombstones

    # Not in the CoordinatorRecord alias (records.py imports no group type's module).
    return cast("list[CoordinatorRecord]", streams_group_tombstones(group))


def is_dead(group: OffsetGroup) -> bool:
    return group.is_(GroupState.DEAD) if isinstance(group, ClassicGroup) else group.dead


def is_empty(group: OffsetGroup) -> bool:
    return group.is_(GroupState.EMPTY) if isinstance(group, ClassicGroup) else group.is_empty()


def commit_target(
    rt: Runtime, request: OffsetCommitRequest | TxnOffsetCommitRequest
) -> OffsetGroup | ErrorCode:
    """The group an OffsetCommit or TxnOffsetCommit writes to, or the error (Kafka's
    OffsetMetadataManager.validateOffsetCommit and validateTransactionalOffsetCommit).

    An unknown group is created (empty, classic, with no protocol: it only stores offsets) for a commit
    from outside any group (generation -1, whatever member id it names); a commit naming a generation
    of a group that does not exist is GROUP_ID_NOT_FOUND from OffsetCommit v9, ILLEGAL_GENERATION before
    and for TxnOffsetCommit. A share group refuses offset commits (GROUP_ID_NOT_FOUND). Otherwise the
    group type judges the member (`validate_offset_commit`).
    """
    error = rt.validate_group_status(request.group_id, allow_empty_id=True)
    if error is not None:
        return error
    group_id = request.group_id
    assert group_id is not None
    transactional = isinstance(request, TxnOffsetCommitRequest)
    api_version = (
        request.api_version if isinstance(request, OffsetCommitRequest) else MEMBER_EPOCH_COMMIT_VERSION
    )
    if group_id in rt.share_groups:
        return ErrorCode.GROUP_ID_NOT_FOUND  # as Kafka's ShareGroup: "not a consumer group"
    consumer = rt.consumer_groups.get(group_id) or rt.streams_groups.get(group_id)
    if consumer is not None:
        # A consumer or streams group checks the member epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).
        failure = consumer.validate_offset_commit(
            request.member_id,
            request.group_instance_id,
            request.generation_id,
            transactional=transactional,
            api_version=api_version,
        )
        return consumer if failure is None else failure
    group = rt.groups.get(group_id)
    if group is None:
        if request.generation_id >= 0:
            # A member of a generation this coordinator never saw.
            if not transactional and api_version >= MEMBER_EPOCH_COMMIT_VERSION:
                return ErrorCode.GROUP_ID_NOT_FOUND
            return ErrorCode.ILLEGAL_GENERATION
        # Not using Kafka for membership (simple consumer, admin client, assigned partitions): allow it.
        group = rt.get_or_create_group(group_id)
    error = group.validate_offset_commit(
        request.member_id, request.group_instance_id, request.generation_id, transactional=transactional
    )
    return group if error is None else error


class OffsetManager:
    """The offsets of every group, kept on the groups themselves (`group.offsets`)."""

    __slots__ = ("liveness", "rt")

    def __init__(self, rt: Runtime, liveness: Liveness) -> None:
        self.rt = rt
        self.liveness = liveness

    # -- OffsetCommit ---------------------------------------------------------------------------

    def commit(self, request: OffsetCommitRequest, callback: CommitCallback) -> None:
        """Validate the member and generation, then write the commits; answer once written."""
        send = self.rt.outbox.send
        group = commit_target(self.rt, request)
        if isinstance(group, ErrorCode):
            send(callback, dict.fromkeys(request.offsets, group))
            return
        member = group.find(request.member_id) if isinstance(group, ClassicGroup) else None
        if isinstance(group, ClassicGroup) and member is not None:
            # A commit is a sign of life: the member's session starts again.
            self.liveness.complete_and_schedule_next_heartbeat(group, member)
        self._write_commits(group, request, callback)

    def _metadata_fits(self, offset: OffsetAndMetadata) -> bool:
        # Kafka compares String.length() (UTF-16 units); len() differs only for characters beyond the BMP.
        return offset.metadata is None or len(offset.metadata) <= self.rt.config.offset_metadata_max_bytes

    def _write_commits(
        self, group: OffsetGroup, request: OffsetCommitRequest, callback: CommitCallback
    ) -> None:
        now = self.rt.clock.now_ms()
        valid = {
            tp: o if o.commit_timestamp_ms >= 0 else o._replace(commit_timestamp_ms=now)
            for tp, o in request.offsets.items()
            if self._metadata_fits(o)
        }
        if not valid:
            self.rt.outbox.send(callback, dict.fromkeys(request.offsets, ErrorCode.OFFSET_METADATA_TOO_LARGE))
            return
        group.prepare_offset_commit(valid)
        records = [OffsetCommitRecord(group.group_id, tp, o) for tp, o in valid.items()]
        respond = partial(self._commits_written, group, records, list(request.offsets), callback)
        self.rt.write(CoordinatorResult(group.group_id, records, respond))

    def _commits_written(
        self,
        group: OffsetGroup,
        records: Sequence[OffsetCommitRecord],
        asked: Sequence[TopicPartition],
        callback: CommitCallback,
        append_error: ErrorCode,
    ) -> None:
        live = not is_dead(group)
        for record in records:
            if not live:
                continue
            if append_error is not ErrorCode.NONE:
                group.fail_offset_commit(record.partition, record.offset)
            elif group.has_pending_offset_commit(record.partition):
                # Not if a delete superseded it meanwhile: its tombstone comes after in the log too.
                self.replay_commit(record)
        error = ErrorCode.NONE if append_error is ErrorCode.NONE else offset_write_error(append_error)
        written = {r.partition for r in records}
        self.rt.outbox.send(
            callback, {tp: error if tp in written else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in asked}
        )

    # -- OffsetFetch, OffsetDelete, expiry ------------------------------------------------------

    def fetch(
        self,
        group_id: str | None,
        partitions: Sequence[TopicPartition] | None,
        require_stable: bool,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[ErrorCode, dict[TopicPartition, PartitionOffset]]:
        """Committed offsets regardless of group state; -1 for unknown partitions and groups (a share
        group, whose offsets are not these, is answered as unknown, as Kafka does). A consumer group
        checks the member a v9+ request names (`ConsumerGroup.validate_offset_fetch`); a classic group
        checks nobody."""
        error = self.rt.validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            return error, {}
        group = self.rt.offsets_of(group_id)  # type: ignore[arg-type]
        if group is None or is_dead(group):
            return ErrorCode.NONE, dict.fromkeys(partitions or (), _NO_OFFSET_FETCHED)
        if not isinstance(group, ClassicGroup):
            failure = group.validate_offset_fetch(member_id, member_epoch)
            if failure is not None:
                return failure, {}
        wanted = list(group.offsets) if partitions is None else partitions
        result: dict[TopicPartition, PartitionOffset] = {}
        txn = self.rt.txn_offsets
        in_txn = require_stable and group.group_id in txn.open_by_group
        for tp in wanted:
            offset = group.offsets.get(tp)
            if require_stable and (
                group.has_pending_offset_commit(tp) or (in_txn and txn.has_pending(group.group_id, tp))
            ):
                result[tp] = _UNSTABLE
            elif offset is None:
                result[tp] = _NO_OFFSET_FETCHED
            else:
                result[tp] = PartitionOffset(
                    offset.offset, offset.metadata, offset.leader_epoch, ErrorCode.NONE
                )
        return ErrorCode.NONE, result

    def delete(
        self, group_id: str | None, partitions: Sequence[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: allowed on Empty groups, and on consumer groups for topics nobody subscribes to."""
        error = self.rt.validate_group_status(group_id, allow_empty_id=False)
        if error is not None:
            return error, {}
        group = self.rt.offsets_of(group_id)  # type: ignore[arg-type]
        if group is None or is_dead(group):
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        results: dict[TopicPartition, ErrorCode] = {}
        if is_empty(group):
            eligible = list(partitions)
        elif not isinstance(group, ClassicGroup) or group.is_consumer_group:
            eligible = []
            for tp in partitions:
                if group.is_subscribed_to_topic(tp.topic):
                    results[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    eligible.append(tp)
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        if eligible:
            self.delete_offsets(group, eligible, group_tombstone=False)
            log.info("group.offsets_deleted", group=group_id, partitions=[list(tp) for tp in eligible])
            for tp in eligible:
                results[tp] = ErrorCode.NONE
        return ErrorCode.NONE, results

    def delete_offsets(
        self, group: OffsetGroup, partitions: Collection[TopicPartition], group_tombstone: bool
    ) -> int:
        """Tombstone the offsets of `partitions` (in-flight ones are dropped too); the number removed.

        `group_tombstone` also tombstones the group record (the caller has removed the group).
        """
        group_id = group.group_id
        in_txn = self.rt.txn_offsets.pending_partitions(group_id)
        # As Kafka: a partition with only pending transactional offsets gets a tombstone too.
        removed = [tp for tp in partitions if tp in group.offsets or tp in in_txn]
        for tp in partitions:
            group.pending_offset_commits.pop(tp, None)
        if self.rt.offsets_of(group_id) is not group:
            for tp in removed:  # a removed group's offsets do not replay: drop them here
                group.offsets.pop(tp, None)
                self.rt.txn_offsets.tombstone(group_id, tp)
        records: list[CoordinatorRecord] = [OffsetTombstone(group_id, tp) for tp in removed]
        if group_tombstone:
            records.append(GroupTombstone(group_id))
        self.rt.write_tombstones(group_id, records)
        return len(removed)

    def delete_consumer_group(self, group: ConsumerGroup | StreamsGroup) -> ErrorCode:
        """DeleteGroups of a consumer or streams group: only when empty; its offsets and records get
        tombstones."""
        if not group.is_empty():
            return ErrorCode.NON_EMPTY_GROUP
        group_id = group.group_id
        kind = "consumer" if group_id in self.rt.consumer_groups else "streams"
        partitions = {*group.offsets, *self.rt.txn_offsets.pending_partitions(group_id)}
        removed = self.delete_offsets(group, list(partitions), group_tombstone=False)
        self.rt.write_tombstones(group_id, _group_tombstones(group))
        log.info("group.deleted", group=group_id, type=kind, offsets_removed=removed)
        return ErrorCode.NONE

    def expire(self, group_id: str, partitions: Collection[TopicPartition]) -> bool:
        """Drop offsets found expired; an Empty group left with none goes Dead. True when it died.

        Tombstones go out for the removed offsets, and for the group record if it ever had a generation.
        """
        group = self.rt.offsets_of(group_id)
        if group is None or is_dead(group):
            return False
        # As Kafka: an offset with pending transactional offsets does not expire yet.
        gone = set(partitions) - self.rt.txn_offsets.pending_partitions(group_id)
        partitions = [tp for tp in partitions if tp in gone]
        left = any(tp not in gone for tp in group.offsets) or any(
            tp not in gone for tp in group.pending_offset_commits
        )
        # As Kafka: a group with open transactions stays until their markers.
        dead = is_empty(group) and not left and group_id not in self.rt.txn_offsets.open_by_group
        if not isinstance(group, ClassicGroup):
            removed = self.delete_offsets(group, partitions, group_tombstone=False)
            if dead:
                # Its records get tombstones, after the offsets' (replaying them removes the group).
                self.rt.write_tombstones(group_id, _group_tombstones(group))
        else:
            if dead:
                self.rt.transition(group, GroupState.DEAD, "no offsets left after expiry")
                del self.rt.groups[group_id]
            removed = self.delete_offsets(group, partitions, group_tombstone=dead and group.generation_id > 0)
        if removed or dead:
            log.info("group.offsets_expired", group=group_id, partitions=removed, dead=dead)
        return dead

    # -- replay ---------------------------------------------------------------------------------

    def replay_commit(self, record: OffsetCommitRecord) -> None:
        group = self.rt.offsets_of_or_create(record.group_id)
        group.offsets[record.partition] = record.offset
        if group.pending_offset_commits.get(record.partition) == record.offset:
            del group.pending_offset_commits[record.partition]
        txn = self.rt.txn_offsets
        if record.group_id in txn.open_by_group:
            txn.committed(record.group_id, record.partition)

    def replay_txn_commit(self, record: TxnOffsetCommitRecord) -> None:
        """A transactional offset: pending in its producer's transaction (the group exists, as in Kafka)."""
        self.rt.offsets_of_or_create(record.group_id)
        self.rt.txn_offsets.add(record)

    def replay_marker(self, marker: TransactionMarker) -> None:
        """COMMIT moves the producer's pending offsets of the partition's groups into their committed
        offsets (unless a more recent commit is there); ABORT drops them."""
        partition_for = self.rt.sink.partition_for
        wanted = marker.offsets_partition
        ended = self.rt.txn_offsets.end(
            marker.producer_id, marker.commit, lambda group_id: partition_for(group_id) == wanted
        )
        for group_id, tp, offset in ended:
            group = self.rt.offsets_of(group_id)
            if group is not None:
                group.offsets[tp] = offset
        if ended or marker.commit is False:
            log.debug(
                "group.txn_offsets_completed",
                producer_id=marker.producer_id,
                commit=marker.commit,
                partition=wanted,
                materialized=len(ended),
            )

    def replay_tombstone(self, record: OffsetTombstone) -> None:
        group = self.rt.offsets_of(record.group_id)
        if group is not None:
            group.offsets.pop(record.partition, None)
        self.rt.txn_offsets.tombstone(record.group_id, record.partition)
