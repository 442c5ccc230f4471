"""The offset side of a group: staging commits, mapping store errors, fetching and deleting offsets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.group import Group, GroupState
from kafkito.broker.coordinator.results import (
    NO_OFFSET,
    CommitCallback,
    OffsetAndMetadata,
    PartitionOffset,
    TopicPartition,
)
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.store import GroupStore, StoreCallback

_NO_OFFSET_FETCHED = PartitionOffset(NO_OFFSET, "", -1, ErrorCode.NONE)
_UNSTABLE = PartitionOffset(NO_OFFSET, "", -1, ErrorCode.UNSTABLE_OFFSET_COMMIT)

_OFFSET_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}

_GROUP_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.REBALANCE_IN_PROGRESS,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


def group_store_error(append_error: ErrorCode) -> ErrorCode:
    """What a client sees when writing the group record failed with `append_error`."""
    return _GROUP_APPEND_ERRORS.get(append_error, append_error)


def offset_store_error(append_error: ErrorCode) -> ErrorCode:
    """What a client sees when writing offset commits failed with `append_error`."""
    return _OFFSET_APPEND_ERRORS.get(append_error, append_error)


class OffsetCommits:
    """Stages commits on the group, writes them through the store and answers once written."""

    def __init__(
        self,
        max_metadata_size: int,
        send: Callable[[CommitCallback, dict[TopicPartition, ErrorCode]], None],
        guard: Callable[[StoreCallback], StoreCallback],
    ) -> None:
        self._max_metadata_size = max_metadata_size
        self._send = send
        self._guard = guard

    def metadata_fits(self, offset: OffsetAndMetadata) -> bool:
        # Kafka compares String.length() (UTF-16 units); len() differs only for characters beyond the BMP.
        return offset.metadata is None or len(offset.metadata) <= self._max_metadata_size

    def store(
        self,
        store: GroupStore,
        group: Group,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        valid = {tp: o for tp, o in offsets.items() if self.metadata_fits(o)}
        if not valid:
            self._send(callback, dict.fromkeys(offsets, ErrorCode.OFFSET_METADATA_TOO_LARGE))
            return
        group.prepare_offset_commit(valid)

        def on_append(append_error: ErrorCode) -> None:
            if append_error is ErrorCode.NONE:
                if not group.is_(GroupState.DEAD):
                    for tp, offset in valid.items():
                        group.complete_offset_commit(tp, offset)
                error = ErrorCode.NONE
            else:
                if not group.is_(GroupState.DEAD):
                    for tp, offset in valid.items():
                        group.fail_offset_commit(tp, offset)
                error = offset_store_error(append_error)
            self._send(
                callback,
                {tp: error if tp in valid else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets},
            )

        store.store_offsets(group, valid, self._guard(on_append))


def fetch_offsets(
    group: Group | None, partitions: Sequence[TopicPartition] | None, require_stable: bool
) -> dict[TopicPartition, PartitionOffset]:
    """Committed offsets regardless of group state; -1 for unknown partitions and groups."""
    if group is None or group.is_(GroupState.DEAD):
        return dict.fromkeys(partitions or (), _NO_OFFSET_FETCHED)
    wanted = list(group.offsets) if partitions is None else partitions
    result: dict[TopicPartition, PartitionOffset] = {}
    for tp in wanted:
        if require_stable and group.has_pending_offset_commit(tp):
            result[tp] = _UNSTABLE
            continue
        offset = group.offsets.get(tp)
        if offset is None:
            result[tp] = _NO_OFFSET_FETCHED
        else:
            result[tp] = PartitionOffset(offset.offset, offset.metadata, offset.leader_epoch, ErrorCode.NONE)
    return result
