"""What a heartbeat writes (Kafka's consumerGroupHeartbeat, step by step), computed without changing
the group: the member's metadata, the regex resolutions, the group epoch bump, the new target
assignment, and the member's next current assignment. The caller writes the records, and the group
changes when they are replayed.

A regex nobody in the group subscribed to before is resolved after the heartbeat that brings it, as
Kafka resolves it in the background: that heartbeat bumps the group epoch only for what else changed
(names, a regex already resolved, a regex dropped), counts the new regex as matching nothing, and the
caller writes its resolution (`Plan.resolve_regexes`) once the answer is out; the epoch bump of that
write brings its topics on a later heartbeat.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import NamedTuple

from kafkito.broker.coordinator.consumer.assignors import Assignor
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.member import ConsumerGroupMember, PartitionMap
from kafkito.broker.coordinator.consumer.reconcile import Reconciled, current_of, reconcile
from kafkito.broker.coordinator.consumer.records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataRecord,
    ConsumerGroupRecord,
    ConsumerGroupRegexRecord,
    ConsumerGroupRegexTombstone,
    ConsumerGroupTargetAssignmentMemberRecord,
    ConsumerGroupTargetAssignmentMemberTombstone,
    to_assignment,
)
from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
from kafkito.broker.coordinator.consumer.subscription import member_topic_ids, metadata_hash, resolve_regex
from kafkito.broker.coordinator.consumer.target import compute_target, preferred_assignor
from kafkito.broker.coordinator.consumer.topics import TopicsView


class Context(NamedTuple):
    """What planning needs besides the group: topics, their change counter, the clock, assignors,
    and the group's assignment interval (`group.consumer.assignment.interval.ms`)."""

    topics: TopicsView
    topics_version: int
    now_ms: int
    assignors: Mapping[str, Assignor]
    default_assignor: Assignor
    assignment_interval_ms: int = 0


def may_assign(group: ConsumerGroup, ctx: Context) -> bool:
    """Whether a heartbeat may compute a new target assignment now (Kafka's
    canComputeNextTargetAssignment): the group never had one, batching is off (an interval of 0), or
    the interval has passed since the last one. Otherwise the heartbeat reconciles against the last
    target, and the first heartbeat of any member after the interval computes the next one: a burst
    of joins costs one assignor run per interval instead of one per join."""
    last = group.assignment_timestamp_ms
    interval = ctx.assignment_interval_ms
    return last == 0 or interval == 0 or ctx.now_ms >= last + interval


class Plan(NamedTuple):
    records: list[ConsumerGroupRecord]
    member: ConsumerGroupMember
    reconciled: Reconciled
    resolve_regexes: bool = False
    """A regex of the group is not resolved yet: the caller resolves it once the answer is out."""


def updated_member(
    member: ConsumerGroupMember,
    request: ConsumerHeartbeatRequest,
    classic: ClassicMemberMetadata | None = None,
) -> ConsumerGroupMember:
    """The member with the request's metadata (None and -1 in the request: unchanged); `classic`
    is a classic member's JoinGroup metadata (session timeout, protocols)."""
    regex = member.subscribed_topic_regex
    if request.subscribed_topic_regex is not None:
        regex = request.subscribed_topic_regex or None
    timeout = request.rebalance_timeout_ms
    assignor = request.server_assignor
    return dataclasses.replace(
        member,
        instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
        rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
        client_id=request.client_id,
        client_host=request.client_host,
        subscribed_topic_names=(
            tuple(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names
        ),
        subscribed_topic_regex=regex,
        rebalance_timeout_ms=member.rebalance_timeout_ms if timeout == -1 else timeout,
        server_assignor=member.server_assignor if assignor is None else assignor,
        classic_member=classic if classic is not None else member.classic_member,
    )


Resolved = Callable[[str], tuple[str, ...]]


def resolver(
    group: ConsumerGroup,
    ctx: Context,
    in_use: set[str],
    records: list[ConsumerGroupRecord],
    deferred: set[str] | None = None,
) -> Resolved:
    """Resolve the regexes in use (again when topics changed since), appending a regex record when a
    resolution changed and a tombstone for each regex nobody uses any more; returns the lookup.
    With `deferred`, a regex the group never resolved is not resolved now: it matches nothing for
    the time being and is added to `deferred`."""
    resolved: dict[str, tuple[str, ...]] = {}
    for regex in sorted(in_use):
        known = group.regexes.get(regex)
        if known is not None and known.version == ctx.topics_version:
            resolved[regex] = known.topics
            continue
        if known is None and deferred is not None:
            deferred.add(regex)
            continue
        topics = resolve_regex(regex, ctx.topics.names())
        resolved[regex] = topics
        if known is None or known.topics != topics or known.version != ctx.topics_version:
            records.append(
                ConsumerGroupRegexRecord(group.group_id, regex, topics, ctx.topics_version, ctx.now_ms)
            )
    for regex in sorted(group.regexes):
        if regex not in in_use:
            records.append(ConsumerGroupRegexTombstone(group.group_id, regex))
    return lambda regex: resolved.get(regex, ())


def subscriptions_after(
    group: ConsumerGroup, leaving: ConsumerGroupMember | None, joining: ConsumerGroupMember | None
) -> tuple[set[str], set[str]]:
    """The topic names and the regexes the group subscribes to once `leaving` (a member as it is
    now) is gone and `joining` (a member as it will be) is in: from the group's counts, not its
    members (a heartbeat costs the same in a group of one or of a thousand)."""
    names = Counter(group.subscribed_names)
    regexes = Counter(group.regex_counts)
    if leaving is not None:
        names.subtract(leaving.subscribed_topic_names)
        if leaving.subscribed_topic_regex:
            regexes[leaving.subscribed_topic_regex] -= 1
    if joining is not None:
        names.update(joining.subscribed_topic_names)
        if joining.subscribed_topic_regex:
            regexes[joining.subscribed_topic_regex] += 1
    return {n for n, c in names.items() if c > 0}, {r for r, c in regexes.items() if c > 0}


def epoch_records(
    group: ConsumerGroup,
    ctx: Context,
    records: list[ConsumerGroupRecord],
    force: bool,
    leaving: ConsumerGroupMember | None = None,
    joining: ConsumerGroupMember | None = None,
    deferred: set[str] | None = None,
) -> tuple[int, Resolved]:
    """Resolve regexes, hash the subscribed topics, and bump the group epoch when the subscriptions
    changed (`force`), a resolution changed, or the topics' metadata changed. The new group epoch.
    `deferred`: see `resolver`."""
    names, in_use = subscriptions_after(group, leaving, joining)
    before = len(records)
    resolved = resolver(group, ctx, in_use, records, deferred)
    regex_changed = any(
        isinstance(r, ConsumerGroupRegexRecord) and r.topics != _known(group, r.regex)
        for r in records[before:]
    )
    for regex in in_use:
        names.update(resolved(regex))
    new_hash = metadata_hash(names, ctx.topics)
    epoch = group.group_epoch
    if force or regex_changed or new_hash != group.metadata_hash:
        epoch += 1
        records.append(ConsumerGroupMetadataRecord(group.group_id, epoch, new_hash))
    return epoch, resolved


def _known(group: ConsumerGroup, regex: str) -> tuple[str, ...]:
    """What a regex matched so far: nothing for one never resolved (its first resolution bumps the
    epoch only when it matches a topic, as Kafka's)."""
    known = group.regexes.get(regex)
    return () if known is None else known.topics


def removal_records(group: ConsumerGroup, member_id: str, ctx: Context) -> list[ConsumerGroupRecord]:
    """A member leaves or is fenced: its tombstones (Kafka's order), then the group epoch bump."""
    records = member_tombstones(group.group_id, member_id)
    epoch_records(group, ctx, records, force=True, leaving=group.members.get(member_id))
    return records


def heartbeat_plan(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    replaced: ConsumerGroupMember | None,
    request: ConsumerHeartbeatRequest,
    ctx: Context,
    classic: ClassicMemberMetadata | None = None,
) -> Plan:
    """The records of one heartbeat of `member` (new, existing, or taking over the static member
    `replaced`), and its next current assignment; a classic member's JoinGroup is one too, with
    its `classic` metadata. Raises `FencedMember`."""
    gid = group.group_id
    records: list[ConsumerGroupRecord] = []
    if replaced is not None:
        records += member_tombstones(gid, replaced.member_id)
    updated = updated_member(member, request, classic)
    is_new = member.member_id not in group.members
    if is_new or updated.metadata_record(gid) != member.metadata_record(gid):
        records.append(updated.metadata_record(gid))
    names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    regex_changed = updated.subscribed_topic_regex != member.subscribed_topic_regex
    new_regex = updated.subscribed_topic_regex
    unresolved = regex_changed and bool(new_regex) and new_regex not in group.regexes
    subscription_changed = (is_new and replaced is None) or names_changed or regex_changed
    epoch = group.group_epoch
    deferred: set[str] = set()
    resolved: Resolved | None = None
    if subscription_changed:
        # Kafka bumps for new names, a regex already resolved or dropped; a regex it must resolve
        # first bumps once resolved.
        force = (is_new and replaced is None) or names_changed or (regex_changed and not unresolved)
        leaving = replaced if replaced is not None else (None if is_new else member)
        epoch, resolved = epoch_records(group, ctx, records, force, leaving, updated, deferred)
    target_epoch = group.assignment_epoch
    target = group.target.get(member.member_id if replaced is None else replaced.member_id, {})
    if epoch > group.assignment_epoch and may_assign(group, ctx):
        target_records, target = _new_target(group, updated, replaced, records, ctx, epoch)
        records += target_records
        target_epoch = epoch
    elif replaced is not None:
        inherited = to_assignment(target)
        records.append(ConsumerGroupTargetAssignmentMemberRecord(gid, member.member_id, inherited))
    lookup = resolved if resolved is not None else _known_lookup(group)

    def subscribed() -> frozenset[uuid.UUID]:
        return member_topic_ids(updated, lookup, ctx.topics)

    reconciled = _reconcile(
        group, updated, replaced, target_epoch, target, request, subscribed, subscription_changed
    )
    if is_new or reconciled != current_of(updated):
        records.append(_current_record(gid, updated, reconciled))
    return Plan(records, updated, reconciled, bool(deferred))


def _known_lookup(group: ConsumerGroup) -> Resolved:
    regexes = group.regexes

    def lookup(regex: str) -> tuple[str, ...]:
        known = regexes.get(regex)
        return () if known is None else known.topics

    return lookup


def member_tombstones(gid: str, member_id: str) -> list[ConsumerGroupRecord]:
    """A member's tombstones in Kafka's order: current assignment, target assignment, metadata."""
    return [
        ConsumerGroupCurrentAssignmentTombstone(gid, member_id),
        ConsumerGroupTargetAssignmentMemberTombstone(gid, member_id),
        ConsumerGroupMemberTombstone(gid, member_id),
    ]


def _new_target(
    group: ConsumerGroup,
    updated: ConsumerGroupMember,
    replaced: ConsumerGroupMember | None,
    written: list[ConsumerGroupRecord],
    ctx: Context,
    epoch: int,
) -> tuple[list[ConsumerGroupRecord], PartitionMap]:
    """The target assignment at `epoch` over the members as they will be, and the member's target."""
    members = dict(group.members)
    targets = dict(group.target)
    if replaced is not None:
        del members[replaced.member_id]
        targets[updated.member_id] = targets.pop(replaced.member_id, {})
    members[updated.member_id] = updated
    # Regexes as this heartbeat resolved them (its regex records), else as the group knows them.
    resolved = {r: v.topics for r, v in group.regexes.items()}
    resolved.update({r.regex: r.topics for r in written if isinstance(r, ConsumerGroupRegexRecord)})
    assignor = preferred_assignor(members, ctx.assignors, ctx.default_assignor)
    known = lambda regex: resolved.get(regex, ())  # noqa: E731
    new_targets, records = compute_target(
        group, targets, members, known, ctx.topics, assignor, epoch, ctx.now_ms
    )
    return records, new_targets.get(updated.member_id, {})


def _reconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    replaced: ConsumerGroupMember | None,
    target_epoch: int,
    target: PartitionMap,
    request: ConsumerHeartbeatRequest,
    subscribed: Callable[[], frozenset[uuid.UUID]],
    subscription_changed: bool,
) -> Reconciled:
    mine = {member.member_id} if replaced is None else {member.member_id, replaced.member_id}
    owners = group.owners

    def is_free(topic_id: uuid.UUID, partition: int) -> bool:
        owner = owners.get((topic_id, partition))
        return owner is None or owner[0] in mine

    return reconcile(
        member, target_epoch, target, is_free, request.owned_partitions, subscribed, subscription_changed
    )


def _current_record(gid: str, member: ConsumerGroupMember, reconciled: Reconciled) -> ConsumerGroupRecord:
    return dataclasses.replace(
        member,
        member_epoch=reconciled.member_epoch,
        previous_member_epoch=reconciled.previous_member_epoch,
        state=reconciled.state,
        assigned=reconciled.assigned,
        pending_revocation=reconciled.pending_revocation,
    ).assignment_record(gid)
