"""What a share group writes when it changes: pure functions from the group, the topics and the
change to the records (the caller appends them, then replays them).

A join, a subscription change or a leave bumps the group epoch, as does a change of the subscribed
topics' metadata (the metadata hash); a bumped epoch computes a new target assignment at that epoch.
A member reaches its target in one step (nothing to revoke in a share group).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Collection, Iterable, Mapping

from kafkito.broker.coordinator.consumer.topics import TopicsView
from kafkito.broker.coordinator.share.assignor import assign
from kafkito.broker.coordinator.share.group import STABLE_MEMBER_STATE, ShareGroup, ShareGroupMember
from kafkito.broker.coordinator.share.records import (
    Assignment,
    ShareGroupCurrentAssignmentRecord,
    ShareGroupCurrentAssignmentTombstone,
    ShareGroupMemberTombstone,
    ShareGroupMetadataRecord,
    ShareGroupRecord,
    ShareGroupStatePartitionMetadataRecord,
    ShareGroupTargetAssignmentMemberRecord,
    ShareGroupTargetAssignmentMemberTombstone,
    ShareGroupTargetAssignmentMetadataRecord,
)

TopicPartitions = dict[uuid.UUID, frozenset[int]]
TopicInfos = tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]


def metadata_hash(topics: TopicsView, names: Iterable[str]) -> int:
    """A signed 64-bit hash of the subscribed topics that exist: names, ids and partition counts."""
    digest = hashlib.blake2b(digest_size=8)
    for name in sorted(set(names)):
        info = topics.by_name(name)
        if info is not None:
            digest.update(f"{name}\0{info.topic_id}\0{info.num_partitions}\0".encode())
    return int.from_bytes(digest.digest(), "big", signed=True)


def _partitions(topics: TopicsView, names: Iterable[str]) -> dict[uuid.UUID, int]:
    found = {}
    for name in set(names):
        info = topics.by_name(name)
        if info is not None:
            found[info.topic_id] = info.num_partitions
    return found


def epoch_records(
    group: ShareGroup,
    subscriptions: Mapping[str, tuple[str, ...]],
    topics: TopicsView,
    force: bool,
    out: list[ShareGroupRecord],
) -> tuple[int, dict[str, Assignment]]:
    """Bump the group epoch when `force` (membership or a subscription changed) or the subscribed
    topics changed, and then compute the target assignment: appends the records to `out`, returns
    the assignment epoch and every member's target after them."""
    names = [name for subscribed in subscriptions.values() for name in subscribed]
    new_hash = metadata_hash(topics, names)
    epoch = group.group_epoch
    if force or new_hash != group.metadata_hash:
        epoch += 1
        out.append(ShareGroupMetadataRecord(group.group_id, epoch, new_hash))
    targets = {m: group.targets.get(m, ()) for m in subscriptions}
    if epoch <= group.assignment_epoch:
        return group.assignment_epoch, targets
    ids_of = {name: info.topic_id for name in set(names) if (info := topics.by_name(name)) is not None}
    wanted = {
        m: frozenset(ids_of[n] for n in subscribed if n in ids_of) for m, subscribed in subscriptions.items()
    }
    targets = assign(wanted, _partitions(topics, names))
    for member_id, target in sorted(targets.items()):
        if group.targets.get(member_id) != target or member_id not in group.targets:
            out.append(ShareGroupTargetAssignmentMemberRecord(group.group_id, member_id, target))
    out.append(ShareGroupTargetAssignmentMetadataRecord(group.group_id, epoch))
    return epoch, targets


def reconcile(
    group_id: str, member: ShareGroupMember, epoch: int, target: Assignment, out: list[ShareGroupRecord]
) -> bool:
    """Move the member to its target at the assignment epoch (no revocation in share groups): True
    when its assignment changed."""
    if member.member_epoch == epoch and member.assigned == target:
        return False
    out.append(
        ShareGroupCurrentAssignmentRecord(
            group_id, member.member_id, epoch, member.member_epoch, STABLE_MEMBER_STATE, target
        )
    )
    return member.assigned != target


def removal_records(group: ShareGroup, member_id: str, topics: TopicsView) -> list[ShareGroupRecord]:
    """A member leaves or is fenced: its tombstones, the group epoch bump and the new targets."""
    gid = group.group_id
    out: list[ShareGroupRecord] = [
        ShareGroupCurrentAssignmentTombstone(gid, member_id),
        ShareGroupTargetAssignmentMemberTombstone(gid, member_id),
        ShareGroupMemberTombstone(gid, member_id),
    ]
    subscriptions = {
        m.member_id: m.subscribed_topic_names for m in group.members.values() if m.member_id != member_id
    }
    epoch_records(group, subscriptions, topics, True, out)
    return out


def to_initialize(
    group: ShareGroup, targets: Mapping[str, Assignment], topics: TopicsView
) -> TopicPartitions:
    """Assigned partitions the share-state persister was never told about."""
    fresh: dict[uuid.UUID, set[int]] = {}
    for assignment in targets.values():
        for topic_id, partitions in assignment:
            known = (
                group.initialized.get(topic_id, ("", frozenset()))[1]
                | group.initializing.get(topic_id, ("", frozenset()))[1]
            )
            missing = set(partitions) - known
            if missing and topics.by_id(topic_id) is not None:
                fresh.setdefault(topic_id, set()).update(missing)
    return {t: frozenset(p) for t, p in fresh.items()}


def state_record(
    group: ShareGroup,
    topics: TopicsView,
    initializing: Mapping[uuid.UUID, frozenset[int]],
    initialized: Mapping[uuid.UUID, frozenset[int]],
) -> ShareGroupStatePartitionMetadataRecord:
    """The group's state-partition metadata with `initializing` added to those being initialized and
    `initialized` moved from there to the initialized ones."""
    now_initializing = {t: set(p) for t, (_n, p) in group.initializing.items()}
    now_initialized = {t: set(p) for t, (_n, p) in group.initialized.items()}
    for topic_id, partitions in initializing.items():
        now_initializing.setdefault(topic_id, set()).update(partitions)
    for topic_id, partitions in initialized.items():
        now_initialized.setdefault(topic_id, set()).update(partitions)
        now_initializing.setdefault(topic_id, set()).difference_update(partitions)

    def named(found: dict[uuid.UUID, set[int]]) -> tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]:
        return tuple(
            (t, _name(group, topics, t), tuple(sorted(p)))
            for t, p in sorted(found.items(), key=lambda i: i[0].bytes)
            if p
        )

    deleting = tuple(sorted(group.deleting.items(), key=lambda i: i[0].bytes))
    return ShareGroupStatePartitionMetadataRecord(
        group.group_id, named(now_initializing), named(now_initialized), deleting
    )


def _name(group: ShareGroup, topics: TopicsView, topic_id: uuid.UUID) -> str:
    info = topics.by_id(topic_id)
    if info is not None:
        return info.name
    known = group.initialized.get(topic_id) or group.initializing.get(topic_id)
    return known[0] if known else ""


def state_without(
    group: ShareGroup, topic_ids: Collection[uuid.UUID]
) -> ShareGroupStatePartitionMetadataRecord:
    """The group's state-partition metadata with those topics removed (their state was deleted)."""

    def keep(found: Mapping[uuid.UUID, tuple[str, frozenset[int]]]) -> TopicInfos:
        return tuple(
            (t, name, tuple(sorted(p)))
            for t, (name, p) in sorted(found.items(), key=lambda i: i[0].bytes)
            if t not in topic_ids
        )

    deleting = tuple(sorted(group.deleting.items(), key=lambda i: i[0].bytes))
    return ShareGroupStatePartitionMetadataRecord(
        group.group_id, keep(group.initializing), keep(group.initialized), deleting
    )
