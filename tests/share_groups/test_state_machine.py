"""A hypothesis state machine over share groups in virtual time: joins, heartbeats, leaves, session
timeouts, topic creations and growth, and restarts (a fresh coordinator replaying every record).

Invariants: the group is what its records say (a replay gives the same group); every partition a
member was given was initialized in the share-state persister; every member has a target at the
group's epoch; a member's partitions are of topics it subscribes to; every partition of a
subscribed topic goes to some subscriber; with at least as many partitions as subscribers, each goes
to exactly one, and the counts differ by at most one.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkito.broker.coordinator.share.config import ShareConfig
from kafkito.broker.coordinator.share.group import ShareGroup
from kafkito.protocol.errors import ErrorCode
from tests.share_groups.harness import Harness, request

GROUP = "g"
MEMBERS = ("m0", "m1", "m2", "m3", "m4")
TOPICS = ("a", "b", "c")
SESSION_MS = 45_000


def _snapshot(group: ShareGroup | None) -> object:
    if group is None:
        return None
    members = {
        m.member_id: (m.member_epoch, m.assigned, m.subscribed_topic_names, m.client_id)
        for m in group.members.values()
    }
    return (group.group_epoch, group.assignment_epoch, group.metadata_hash, members, dict(group.targets))


class ShareGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(ShareConfig(group_share_max_size=4))
        self.epochs: dict[str, int] = {}  # what each live client believes its epoch is

    def _group(self) -> ShareGroup | None:
        return self.h.coordinator.get_share_group(GROUP)

    @rule(member=st.sampled_from(MEMBERS), topics=st.sets(st.sampled_from(TOPICS), min_size=1))
    def join(self, member: str, topics: set[str]) -> None:
        group = self._group()
        known = group is not None and member in group.members
        result = self.h.heartbeat(request(GROUP, member, 0, sorted(topics)))
        if result.error is ErrorCode.GROUP_MAX_SIZE_REACHED:
            assert group is not None and len(group.members) == 4 and not known
            return
        assert result.error is ErrorCode.NONE, result
        assert result.assignment is not None
        self.epochs[member] = result.member_epoch

    @rule(member=st.sampled_from(MEMBERS))
    def heartbeat(self, member: str) -> None:
        epoch = self.epochs.get(member)
        group = self._group()
        known = group is not None and member in group.members
        result = self.h.heartbeat(request(GROUP, member, epoch if epoch is not None else 1))
        if epoch is None or group is None or not known:
            assert result.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.GROUP_ID_NOT_FOUND), result
            self.epochs.pop(member, None)
            return
        assert result.error is ErrorCode.NONE, result
        assert result.member_epoch == group.assignment_epoch
        if result.assignment is not None:
            assert result.assignment == group.targets[member]
        self.epochs[member] = result.member_epoch

    @rule(member=st.sampled_from(MEMBERS))
    def leave(self, member: str) -> None:
        group = self._group()
        known = group is not None and member in group.members
        result = self.h.heartbeat(request(GROUP, member, -1))
        assert (result.error is ErrorCode.NONE) == known, result
        self.epochs.pop(member, None)

    @rule(ms=st.integers(min_value=1, max_value=SESSION_MS))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)
        group = self._group()
        for member in list(self.epochs):
            if group is None or member not in group.members:
                del self.epochs[member]

    @rule(topic=st.sampled_from(TOPICS), partitions=st.integers(min_value=1, max_value=6))
    def create_or_grow(self, topic: str, partitions: int) -> None:
        info = self.h.topics.by_name(topic)
        if info is None:
            self.h.topics.create(topic, partitions, uuid.UUID(int=TOPICS.index(topic) + 1))
        elif partitions > info.num_partitions:
            self.h.topics.grow(topic, partitions)
        else:
            return
        self.h.coordinator.on_topics_changed()

    @rule()
    def restart(self) -> None:
        before = _snapshot(self._group())
        self.h.restart()
        assert _snapshot(self._group()) == before

    @invariant()
    def replay_gives_the_same_group(self) -> None:
        from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator
        from kafkito.purgatory import Timer

        fresh = GroupCoordinator(CoordinatorConfig(), self.h.clock, Timer(self.h.clock), topics=self.h.topics)
        for record in self.h.sink.records:
            fresh.replay(record)
        assert _snapshot(fresh.get_share_group(GROUP)) == _snapshot(self._group())

    @invariant()
    def every_assigned_partition_has_share_state(self) -> None:
        group = self._group()
        if group is None:
            return
        # What members were given (a target not yet sent is initialized at the heartbeat sending it).
        for member in group.members.values():
            for topic_id, partitions in member.assigned:
                if self.h.topics.by_id(topic_id) is None:
                    continue  # deleted since: its state is gone, the member loses it at its next heartbeat
                assert set(partitions) <= group.initialized[topic_id][1]
                assert all((GROUP, topic_id, p) in self.h.persister.offsets for p in partitions)
        assert not group.initializing

    @invariant()
    def assignment_is_complete_and_balanced(self) -> None:
        group = self._group()
        if group is None or not group.members:
            return
        assert set(group.targets) == set(group.members)
        assert group.assignment_epoch == group.group_epoch
        for member in group.members.values():
            assert member.member_epoch <= group.assignment_epoch
            for topic_id, _partitions in group.targets[member.member_id]:
                info = self.h.topics.by_id(topic_id)
                assert info is not None and info.name in member.subscribed_topic_names
        for name in TOPICS:
            info = self.h.topics.by_name(name)
            subscribers = [m for m in group.members.values() if name in m.subscribed_topic_names]
            if info is None or not subscribers:
                continue
            owners: Counter[int] = Counter()
            counts = []
            for m in subscribers:
                partitions = dict(group.targets[m.member_id]).get(info.topic_id, ())
                owners.update(partitions)
                counts.append(len(partitions))
            assert set(owners) == set(range(info.num_partitions))
            if info.num_partitions >= len(subscribers):
                assert all(n == 1 for n in owners.values())
                assert max(counts) - min(counts) <= 1
            else:
                assert all(n == 1 for n in counts)


ShareGroupMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("KAFKITO_SHARE_GROUP_EXAMPLES", "100")),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestShareGroupMachine = ShareGroupMachine.TestCase
