"""Virtual-time tests of every reconciliation path of a KIP-848 consumer group."""

from __future__ import annotations

from kafkito.broker.coordinator.consumer.records import (
    ConsumerGroupCurrentAssignmentTombstone,
    ConsumerGroupMemberTombstone,
    ConsumerGroupMetadataRecord,
)
from kafkito.broker.coordinator.consumer.state import ConsumerGroupState, MemberState
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import (
    REBALANCE_MS,
    SESSION_MS,
    Harness,
    Member,
    converge,
    heartbeat_request,
    owned_by_two,
    was_written,
)


def _two_members() -> tuple[Harness, Member, Member]:
    h = Harness()
    h.topics.create("t", 6)
    a, b = Member("a", ("t",)), Member("b", ("t",))
    h.join("g", a)
    converge(h, "g", [a])
    return h, a, b


def test_a_first_member_gets_every_partition_at_epoch_two() -> None:
    h = Harness()
    topic = h.topics.create("t", 6)
    a = Member("a", ("t",))
    result = h.join("g", a)
    assert result.error is ErrorCode.NONE
    # As Kafka 4.4's: a new group is at epoch 1, so its first member's join bumps it to 2.
    assert result.member_epoch == 2
    assert result.heartbeat_interval_ms == 5000
    assert a.owned == {topic.topic_id: frozenset(range(6))}
    assert h.group("g").state is ConsumerGroupState.STABLE


def test_revoke_before_assign() -> None:
    h, a, b = _two_members()
    joined = h.join("g", b)
    # b is at the new epoch but gets nothing yet: a still owns every partition.
    assert joined.member_epoch == 3
    assert b.owned == {}
    assert h.group("g").members["b"].state is MemberState.UNRELEASED_PARTITIONS
    # a is told to revoke half (it keeps its epoch until it has).
    first = h.beat("g", a, release_all=False)
    assert first.member_epoch == 2
    assert h.group("g").members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert len(a.owned[next(iter(a.owned))]) == 6  # has not revoked yet
    # While a has not revoked, b still gets nothing.
    assert h.beat("g", b).assignment is None
    assert b.owned == {}
    assert not owned_by_two([a, b])
    # a revokes: its next heartbeat reports three partitions; it moves to epoch 3.
    a.owned = dict(h.group("g").members["a"].assigned)
    assert h.beat("g", a).member_epoch == 3
    # Now b gets the released partitions.
    got = h.beat("g", b)
    assert got.assignment is not None and sum(len(p) for _, p in got.assignment) == 3
    assert not owned_by_two([a, b])
    assert h.group("g").state is ConsumerGroupState.STABLE


def test_session_timeout_fences_the_member() -> None:
    h, a, b = _two_members()
    h.join("g", b)
    converge(h, "g", [a, b])
    epoch = h.group("g").group_epoch
    for _ in range(10):  # b keeps heartbeating, a is silent
        h.clock.advance(SESSION_MS // 10)
        h.beat("g", b)
    h.clock.advance(1)
    group = h.group("g")
    assert "a" not in group.members
    assert group.group_epoch == epoch + 1
    assert was_written(h, ConsumerGroupMemberTombstone("g", "a"))
    assert was_written(h, ConsumerGroupCurrentAssignmentTombstone("g", "a"))
    # a comes back too late: unknown. b gets everything.
    assert h.beat("g", a).error is ErrorCode.UNKNOWN_MEMBER_ID
    converge(h, "g", [b])
    assert sum(len(p) for p in b.owned.values()) == 6


def test_rebalance_timeout_fences_a_member_that_does_not_revoke() -> None:
    h, a, b = _two_members()
    h.join("g", b)
    h.beat("g", a, release_all=False)  # told to revoke, keeps everything
    assert h.group("g").members["a"].state is MemberState.UNREVOKED_PARTITIONS
    for _ in range(REBALANCE_MS // 5000):
        h.clock.advance(5000)
        h.beat("g", a, release_all=False)  # alive, but never revokes
        h.beat("g", b)
    h.clock.advance(1)
    assert "a" not in h.group("g").members
    converge(h, "g", [b])
    assert sum(len(p) for p in b.owned.values()) == 6


def test_static_member_rejoins_with_its_assignment() -> None:
    h = Harness()
    h.topics.create("t", 4)
    a = Member("a1", ("t",), instance_id="A")
    b = Member("b", ("t",))
    h.join("g", a)
    h.join("g", b)
    converge(h, "g", [a, b])
    kept = dict(a.owned)
    epoch = h.group("g").group_epoch
    left = h.heartbeat(heartbeat_request("g", "a1", -2, instance_id="A"))
    assert left.error is ErrorCode.NONE and left.member_epoch == -2
    # The same instance cannot join under another member id while the old one holds it...
    assert h.group("g").members["a1"].member_epoch == -2
    # ...until it has left (it has): a new member id takes over its assignment at once.
    a2 = Member("a2", ("t",), instance_id="A")
    result = h.join("g", a2)
    assert result.error is ErrorCode.NONE
    assert a2.owned == kept
    assert h.group("g").group_epoch == epoch  # no rebalance
    assert "a1" not in h.group("g").members
    converge(h, "g", [a2, b])


def test_static_member_still_active_is_unreleased() -> None:
    h = Harness()
    h.topics.create("t", 2)
    h.join("g", Member("a1", ("t",), instance_id="A"))
    result = h.join("g", Member("a2", ("t",), instance_id="A"))
    assert result.error is ErrorCode.UNRELEASED_INSTANCE_ID


def test_regex_subscription_grows_when_a_matching_topic_is_created() -> None:
    h = Harness()
    t1 = h.topics.create("orders-eu", 2)
    h.topics.create("payments", 2)
    a = Member("a", regex="orders-.*")
    h.join("g", a)
    converge(h, "g", [a])
    assert a.owned == {t1.topic_id: frozenset({0, 1})}
    epoch = h.group("g").group_epoch
    t2 = h.topics.create("orders-us", 3)
    h.coordinator.on_topics_changed()
    assert h.group("g").group_epoch == epoch + 1
    converge(h, "g", [a])
    assert a.owned == {t1.topic_id: frozenset({0, 1}), t2.topic_id: frozenset({0, 1, 2})}


def test_partition_growth_bumps_the_epoch_and_assigns_the_new_partitions() -> None:
    h = Harness()
    topic = h.topics.create("t", 2)
    a = Member("a", ("t",))
    h.join("g", a)
    converge(h, "g", [a])
    h.topics.grow("t", 4)
    h.coordinator.on_topics_changed()
    converge(h, "g", [a])
    assert a.owned == {topic.topic_id: frozenset(range(4))}


def test_assignor_stickiness_fewest_moves() -> None:
    h = Harness()
    h.topics.create("t", 6)
    members = [Member(name, ("t",)) for name in "abc"]
    for m in members:
        h.join("g", m)
    converge(h, "g", members)
    before = {m.member_id: set(next(iter(m.owned.values()))) for m in members}
    d = Member("d", ("t",))
    h.join("g", d)
    converge(h, "g", [*members, d])
    after = {m.member_id: set(next(iter(m.owned.values()), frozenset())) for m in members}
    moved = sum(len(before[k] - after[k]) for k in before)
    assert moved == sum(len(p) for p in d.owned.values())  # only what d got moved
    # One leaves: the others keep what they had.
    kept = {m.member_id: set(next(iter(m.owned.values()), frozenset())) for m in [members[1], members[2], d]}
    h.heartbeat(heartbeat_request("g", "a", -1))
    converge(h, "g", [members[1], members[2], d])
    for m in [members[1], members[2], d]:
        assert kept[m.member_id] <= set(next(iter(m.owned.values())))


def test_leave_bumps_the_epoch_and_frees_the_partitions() -> None:
    h, a, b = _two_members()
    h.join("g", b)
    converge(h, "g", [a, b])
    epoch = h.group("g").group_epoch
    result = h.heartbeat(heartbeat_request("g", "a", -1))
    assert (result.error, result.member_epoch) == (ErrorCode.NONE, -1)
    assert h.group("g").group_epoch == epoch + 1
    assert was_written(h, ConsumerGroupMetadataRecord("g", epoch + 1, h.group("g").metadata_hash))
    converge(h, "g", [b])
    assert sum(len(p) for p in b.owned.values()) == 6


def test_a_restart_rebuilds_the_same_groups_from_the_records() -> None:
    h, a, b = _two_members()
    h.join("g", b)
    h.beat("g", a, release_all=False)
    fresh = h.restart()
    rebuilt, live = fresh.get_consumer_group("g"), h.group("g")
    assert rebuilt is not None
    assert rebuilt.state is live.state
    assert (rebuilt.group_epoch, rebuilt.assignment_epoch) == (live.group_epoch, live.assignment_epoch)
    assert rebuilt.members == live.members
    assert rebuilt.target == live.target
    assert rebuilt.owners == live.owners
