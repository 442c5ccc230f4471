"""The admin offset APIs of share groups on top of the share-state persister:
DescribeShareGroupOffsets (start offsets and lag), AlterShareGroupOffsets and
DeleteShareGroupOffsets (on an empty group only), with Kafka's errors.

The lag is Kafka's (KIP-1226): the log end offset less the persisted start offset and the persisted
count of records past it whose delivery is complete; -1 when either is unknown.

Partitions a group has share state for are those its state-partition metadata record lists as
initialized; altering a partition records it initialized, deleting a topic's state records it gone.
As in Kafka, Describe asks the persister whatever the group (an unknown group or topic has start
offset -1, not an error), and Alter creates a share group that never had a member: its
state-partition metadata record is the group's first record.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from kafkito.broker.coordinator.errors import group_write_error
from kafkito.broker.coordinator.share.group import ShareGroup, ShareGroupState
from kafkito.broker.coordinator.share.persister_api import StateSummary
from kafkito.broker.coordinator.share.plan import state_record, state_without
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.coordinator.runtime import Runtime
    from kafkito.broker.coordinator.share.groups import ShareGroups

NO_OFFSET = -1
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
NO_STATE_MESSAGE = "There is no offset information to delete."
INVALID_GROUP_MESSAGE = "The group id is invalid."  # Alter/Delete carry Errors' text; Describe none


class PartitionStartOffset(NamedTuple):
    partition: int
    start_offset: int
    leader_epoch: int
    lag: int
    error: ErrorCode = ErrorCode.NONE
    error_message: str | None = None


class TopicStartOffsets(NamedTuple):
    name: str
    topic_id: uuid.UUID
    partitions: tuple[PartitionStartOffset, ...]


class GroupStartOffsets(NamedTuple):
    group_id: str
    error: ErrorCode
    error_message: str | None
    topics: tuple[TopicStartOffsets, ...] = ()


class TopicResult(NamedTuple):
    """Alter's answer for one topic (partition, error, message), and delete's (no partitions)."""

    name: str
    topic_id: uuid.UUID
    error: ErrorCode
    error_message: str | None
    partitions: tuple[tuple[int, ErrorCode, str | None], ...] = ()


AlterAnswer = tuple[ErrorCode, str | None, tuple[TopicResult, ...]]


class ShareOffsets:
    """DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets."""

    __slots__ = ("groups", "rt")

    def __init__(self, rt: Runtime, groups: ShareGroups) -> None:
        self.rt = rt
        self.groups = groups

    def _unavailable(self, group_id: str) -> ErrorCode | None:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        if self.rt.sink.is_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None

    def find(self, group_id: str, create: bool = False) -> tuple[ShareGroup | None, ErrorCode, str | None]:
        """The share group (with `create`, a new empty one when the id is free), or why there is
        none (Kafka's errors and messages)."""
        unavailable = self._unavailable(group_id)
        if unavailable is not None:
            message = INVALID_GROUP_MESSAGE if unavailable is ErrorCode.INVALID_GROUP_ID else None
            return None, unavailable, message
        group = self.rt.share_groups.get(group_id)
        if group is not None:
            return group, ErrorCode.NONE, None
        if self.groups.of_another_type(group_id):
            return None, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
        if create:
            return ShareGroup(group_id), ErrorCode.NONE, None
        return None, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."

    # -- describe -------------------------------------------------------------------------------

    def describe(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None
    ) -> GroupStartOffsets:
        """Start offsets of the asked partitions (None: every partition the group has state for).
        Whether the id names a share group, another group or nothing, the persister answers: a
        partition without state, or of an unknown topic, has start offset -1."""
        unavailable = self._unavailable(group_id)
        if unavailable is not None:
            return GroupStartOffsets(group_id, unavailable, None)
        group = self.rt.share_groups.get(group_id)
        if topics is None:
            owned = group.initialized if group is not None else {}
            topics = [(name, sorted(p)) for _t, (name, p) in sorted(owned.items(), key=_by_name)]
        persister = self.groups.persister
        answers = []
        for name, partitions in topics:
            info = self.rt.topics.by_name(name)
            if info is None:
                unknown = tuple(PartitionStartOffset(p, NO_OFFSET, 0, NO_OFFSET) for p in partitions)
                answers.append(TopicStartOffsets(name, uuid.UUID(int=0), unknown))
                continue
            wanted = [(info.topic_id, p) for p in partitions]
            known = persister.summaries(group_id, wanted) if persister is not None else {}
            answers.append(
                TopicStartOffsets(name, info.topic_id, tuple(self._partition(k, known) for k in wanted))
            )
        return GroupStartOffsets(group_id, ErrorCode.NONE, None, tuple(answers))

    def _partition(
        self, key: tuple[uuid.UUID, int], known: Mapping[tuple[uuid.UUID, int], StateSummary | None]
    ) -> PartitionStartOffset:
        summary = known.get(key)
        if summary is None:
            return PartitionStartOffset(key[1], NO_OFFSET, NO_OFFSET, NO_OFFSET)
        start, complete = summary
        if start < 0 or complete < 0:
            return PartitionStartOffset(key[1], start, 0, NO_OFFSET)
        end = self.groups.log_offsets(*key)[1]
        return PartitionStartOffset(key[1], start, 0, end - start - complete)

    # -- alter and delete -----------------------------------------------------------------------

    def _empty_group(
        self, group_id: str, create: bool = False
    ) -> tuple[ShareGroup | None, ErrorCode, str | None]:
        group, error, message = self.find(group_id, create)
        if group is not None and group.state is not ShareGroupState.EMPTY:
            return None, ErrorCode.NON_EMPTY_GROUP, "The group is not empty."
        if group is not None and self.groups.persister is None:
            return None, ErrorCode.COORDINATOR_NOT_AVAILABLE, "No share-group state persister."
        return group, error, message

    def alter(
        self,
        group_id: str,
        topics: Sequence[tuple[str, Sequence[tuple[int, int]]]],
        callback: Callable[[AlterAnswer], None],
    ) -> None:
        """Reset start offsets of an empty group's partitions; a free id becomes an empty share group
        (the state record written for its partitions creates it on replay). `callback` gets the
        answer once that record is written."""
        group, error, message = self._empty_group(group_id, create=True)
        if group is None or self.groups.persister is None:
            self.rt.outbox.send(callback, (error, message, ()))
            return
        results: list[TopicResult] = []
        offsets: dict[tuple[uuid.UUID, int], int] = {}
        touched: dict[uuid.UUID, set[int]] = {}
        for name, partitions in topics:
            info = self.rt.topics.by_name(name)
            answers: list[tuple[int, ErrorCode, str | None]] = []
            for partition, offset in partitions:
                if info is None or not 0 <= partition < info.num_partitions:
                    answers.append((partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE))
                    continue
                offsets[(info.topic_id, partition)] = offset
                touched.setdefault(info.topic_id, set()).add(partition)
                answers.append((partition, ErrorCode.NONE, None))
            topic_id = info.topic_id if info is not None else uuid.UUID(int=0)
            results.append(TopicResult(name, topic_id, ErrorCode.NONE, None, tuple(answers)))
        answer: AlterAnswer = (ErrorCode.NONE, None, tuple(results))
        if not offsets:
            self.rt.outbox.send(callback, answer)
            return
        self.groups.persister.alter(group_id, offsets)
        record = state_record(group, self.rt.topics, {}, {t: frozenset(p) for t, p in touched.items()})

        def written(error: ErrorCode) -> None:
            if error is ErrorCode.NONE:
                self.rt.outbox.send(callback, answer)
            else:
                self.rt.outbox.send(callback, (group_write_error(error), None, ()))

        self.groups.write(group_id, [record], written)

    def delete(
        self, group_id: str, topic_names: Sequence[str]
    ) -> tuple[ErrorCode, str | None, tuple[TopicResult, ...]]:
        """Forget an empty group's share state of whole topics."""
        group, error, message = self._empty_group(group_id)
        if group is None or self.groups.persister is None:
            return error, message, ()
        results, gone = [], []
        for name in topic_names:
            info = self.rt.topics.by_name(name)
            if info is None:
                results.append(
                    TopicResult(
                        name, uuid.UUID(int=0), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE
                    )
                )
                continue
            partitions = set(group.initialized.get(info.topic_id, ("", frozenset()))[1])
            partitions |= group.initializing.get(info.topic_id, ("", frozenset()))[1]
            if not partitions and info.topic_id not in group.deleting:
                results.append(
                    TopicResult(
                        name, uuid.UUID(int=0), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_STATE_MESSAGE
                    )
                )
                continue
            self.groups.persister.delete(group_id, [(info.topic_id, p) for p in sorted(partitions)])
            gone.append(info.topic_id)
            results.append(TopicResult(name, info.topic_id, ErrorCode.NONE, None))
        if gone:
            self.groups.write(group_id, [state_without(group, gone)], lambda _error: None)
        return ErrorCode.NONE, None, tuple(results)


def _by_name(item: tuple[uuid.UUID, tuple[str, frozenset[int]]]) -> str:
    return item[1][0]
