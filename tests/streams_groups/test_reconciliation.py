"""Virtual-time tests of every reconciliation path of a KIP-1071 streams group."""

from __future__ import annotations

from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.broker.coordinator.streams.internal_topics import StatusCode
from kafkito.broker.coordinator.streams.member import MemberState, StreamsGroupState
from kafkito.broker.coordinator.streams.records import StreamsGroupMemberTombstone
from kafkito.broker.coordinator.streams.tasks import count
from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.harness import (
    CHANGELOG,
    REBALANCE_MS,
    REPARTITION,
    SESSION_MS,
    App,
    Harness,
    active_owned_twice,
    converge,
    word_count,
)


def _stable_app(h: Harness) -> App:
    h.topics.create("words", 6)
    a = App("a")
    h.join(a)
    converge(h, [a])
    return a


def test_the_first_member_initializes_the_topology_and_is_told_which_internal_topics_to_create() -> None:
    h = Harness()
    h.topics.create("words", 6)
    result = h.join(App("a"))
    assert result.error is ErrorCode.NONE
    assert result.member_epoch == 2  # a new group is at epoch 1, as Kafka's
    assert result.status is not None
    assert [s.code for s in result.status] == [StatusCode.MISSING_INTERNAL_TOPICS]
    assert result.status[0].detail == f"Internal topics are missing: {CHANGELOG}, {REPARTITION}"
    created = {t.name: t for t in result.internal_topics_to_create}
    # The repartition topic takes its writer's input (6), the changelog its subtopology's task count.
    assert created[REPARTITION].partitions == 6
    assert created[CHANGELOG].partitions == 6
    assert created[CHANGELOG].configs == (("cleanup.policy", "compact"),)
    assert created[CHANGELOG].replication_factor == -1
    assert h.group().state is StreamsGroupState.NOT_READY


def test_once_the_internal_topics_exist_every_task_goes_to_the_only_member() -> None:
    h = Harness()
    a = _stable_app(h)
    assert count(a.owned.active) == 12  # 6 partitions x 2 subtopologies
    assert h.group().state is StreamsGroupState.STABLE


def test_missing_source_topics_appearing_later() -> None:
    h = Harness()
    a = App("a")
    joined = h.join(a)
    assert joined.status is not None
    assert [(s.code, s.detail) for s in joined.status] == [
        (StatusCode.MISSING_SOURCE_TOPICS, "Source topics words are missing.")
    ]
    assert joined.internal_topics_to_create == ()
    assert h.beat(a).active_tasks is None and a.owned.is_empty()
    h.topics.create("words", 4)
    h.beat(a)  # the hash of the topics changed: checked again, internal topics named
    assert set(h.created) == {REPARTITION, CHANGELOG}
    converge(h, [a])
    assert count(a.owned.active) == 8
    assert h.group().validated_topology_epoch == 1


def test_revoke_before_assign() -> None:
    h = Harness()
    a = _stable_app(h)
    b = App("b")
    joined = h.join(b)
    assert joined.active_tasks == ()  # a still runs everything
    assert h.group().members["b"].state is MemberState.UNRELEASED_TASKS
    told = h.beat(a, release=False)  # a is told to give half up, and does not yet
    assert told.member_epoch == 1 + h.group().members["a"].member_epoch - 1
    assert h.group().members["a"].state is MemberState.UNREVOKED_TASKS
    assert count(a.owned.active) == 12
    assert h.beat(b).active_tasks is None  # nothing for b while a has not revoked
    assert b.owned.is_empty()
    assert not active_owned_twice([a, b])
    h.beat(a)  # now it has
    h.beat(a)
    h.beat(b)
    assert count(b.owned.active) == 6 and count(a.owned.active) == 6
    assert not active_owned_twice([a, b])
    converge(h, [a, b])


def test_a_member_fenced_by_its_session_timeout() -> None:
    h = Harness()
    a = _stable_app(h)
    b = App("b")
    h.join(b)
    converge(h, [a, b])
    epoch = h.group().group_epoch
    h.clock.advance(SESSION_MS - 1)
    h.beat(a)
    h.clock.advance(1)  # b's session ends; a's was renewed
    group = h.group()
    assert "b" not in group.members and "a" in group.members
    assert group.group_epoch == epoch + 1
    assert any(type(r) is StreamsGroupMemberTombstone and r.member_id == "b" for r in h.sink.records)
    converge(h, [a])
    assert count(a.owned.active) == 12
    assert h.beat(b).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_misses_the_rebalance_timeout_is_fenced() -> None:
    h = Harness()
    a = _stable_app(h)
    b = App("b")
    h.join(b)
    h.beat(a, release=False)
    assert h.group().members["a"].state is MemberState.UNREVOKED_TASKS
    # a keeps heartbeating (its session lives) but never revokes.
    for _ in range(REBALANCE_MS // 5_000 - 1):
        h.clock.advance(5_000)
        h.beat(a, release=False)
        h.beat(b)
        assert "a" in h.group().members
    h.clock.advance(5_000)
    assert "a" not in h.group().members
    assert h.beat(a).error is ErrorCode.UNKNOWN_MEMBER_ID
    converge(h, [b])
    assert count(b.owned.active) == 12


def test_a_static_member_that_rejoins_gets_its_tasks_back() -> None:
    h = Harness()
    h.topics.create("words", 6)
    a, b = App("a1", instance_id="A"), App("b", instance_id="B")
    h.join(a)
    h.join(b)
    converge(h, [a, b])
    before = a.owned
    epoch = h.group().group_epoch
    left = h.leave(a, static=True)
    assert (left.error, left.member_epoch) == (ErrorCode.NONE, -2)
    for _ in range(3):
        h.beat(b)
    assert count(b.owned.active) == 6  # b does not get a's tasks while it may come back
    assert h.group().state is StreamsGroupState.RECONCILING  # as Kafka: a1 is not at the epoch
    again = App("a2", process_id=a.process_id, instance_id="A")
    rejoined = h.join(again)
    assert rejoined.error is ErrorCode.NONE
    assert again.owned == before
    assert h.group().group_epoch == epoch  # no rebalance
    assert "a1" not in h.group().members
    # An instance id still in use cannot be taken.
    intruder = App("x", instance_id="B")
    assert h.join(intruder).error is ErrorCode.UNRELEASED_INSTANCE_ID


def test_a_static_member_that_does_not_return_is_fenced_at_its_session_timeout() -> None:
    h = Harness()
    h.topics.create("words", 6)
    a, b = App("a", instance_id="A"), App("b", instance_id="B")
    h.join(a)
    h.join(b)
    converge(h, [a, b])
    h.leave(a, static=True)
    for _ in range(SESSION_MS // 5_000):
        h.clock.advance(5_000)
        h.beat(b)
    assert "a" not in h.group().members
    converge(h, [b])
    assert count(b.owned.active) == 12


def test_standby_placement() -> None:
    h = Harness(StreamsConfig(num_standby_replicas=1, initial_rebalance_delay_ms=0, assignment_interval_ms=0))
    h.topics.create("words", 6)
    apps = [App("a"), App("b", process_id="p2"), App("c", process_id="p2")]
    for app in apps:
        h.join(app)
    converge(h, apps)
    group = h.group()
    for member_id, target in group.target.items():
        process = group.members[member_id].process_id
        for subtopology, partitions in target.standby.items():
            for p in partitions:
                owner = group.active_owners[(subtopology, p)]
                assert group.members[owner].process_id != process  # never beside its active
    standby_tasks = [(s, p) for app in apps for s, ps in app.owned.standby.items() for p in ps]
    assert len(standby_tasks) == len(set(standby_tasks)) == 12  # one standby of every task


def test_a_group_config_of_standby_replicas_changes_the_assignment() -> None:
    h = Harness()
    h.topics.create("words", 2)
    apps = [App("a"), App("b")]
    for app in apps:
        h.join(app)
    converge(h, apps)
    assert all(not app.owned.standby for app in apps)
    assert h.coordinator.streams_group_configs.set("wordcount", "streams.num.standby.replicas", 1) is None
    converge(h, apps)
    assert sum(count(app.owned.standby) for app in apps) == 4


def test_a_topology_update_is_refused_and_an_older_topology_is_stale() -> None:
    """Kafka 4.4 keeps the group's first topology: a newer epoch, or another topology under the same
    epoch, is INVALID_REQUEST; a member with an older epoch joins with the STALE_TOPOLOGY status."""
    h = Harness()
    a = _stable_app(h)
    h.topics.create("sentences", 6)
    for topology in (word_count(epoch=2, source="sentences"), word_count(epoch=1, source="sentences")):
        refused = h.join(App("b", topology=topology))
        assert (refused.error, refused.error_message) == (
            ErrorCode.INVALID_REQUEST,
            "Topology updates are not supported yet.",
        )
    assert h.group().topology == word_count(epoch=1).normalized() and "b" not in h.group().members
    c = App("c", topology=word_count(epoch=0))
    older = h.join(c)
    assert older.error is ErrorCode.NONE and older.status is not None
    assert older.status[0] == (
        StatusCode.STALE_TOPOLOGY,
        "The member's topology epoch 0 is behind the group's topology epoch 1.",
    )
    converge(h, [a, c])


def test_endpoints_for_interactive_queries() -> None:
    h = Harness()
    h.topics.create("words", 2)
    a, b = App("a", endpoint=("a.host", 8080)), App("b", endpoint=("b.host", 8080))
    h.join(a)
    h.join(b)
    converge(h, [a, b])
    seen = h.beat(b)
    a.endpoint_epoch = 0  # a client that has seen nothing yet is told everything
    answer = h.beat(a)
    assert answer.partitions_by_user_endpoint is not None
    served = {e.user_endpoint: e.active_partitions for e in answer.partitions_by_user_endpoint}
    assert set(served) == {("a.host", 8080), ("b.host", 8080)}
    partitions = [(t, p) for ps in served.values() for t, parts in ps for p in parts]
    assert sorted(partitions) == sorted([(t, p) for t in ("words", REPARTITION) for p in range(2)])
    assert seen.partitions_by_user_endpoint is None  # b knew the latest endpoint epoch


def test_errors_as_kafka() -> None:
    h = Harness()
    h.topics.create("words", 2)
    a = App("a")
    h.join(a)
    assert h.beat(App("ghost", epoch=3)).error is ErrorCode.UNKNOWN_MEMBER_ID
    ahead = App("a", epoch=99)
    fenced = h.beat(ahead)
    assert fenced.error is ErrorCode.FENCED_MEMBER_EPOCH
    assert fenced.error_message is not None and "greater member epoch (99)" in fenced.error_message
    from kafkito.broker.coordinator.streams.requests import StreamsHeartbeatRequest

    no_timeout = StreamsHeartbeatRequest("g2", "m", 0, topology=word_count())
    refused = h.heartbeat(no_timeout)
    assert (refused.error, refused.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "RebalanceTimeoutMs must be provided in first request.",
    )
    unknown_group = h.heartbeat(StreamsHeartbeatRequest("nope", "m", 3))
    assert unknown_group.error is ErrorCode.GROUP_ID_NOT_FOUND


def test_a_restart_replays_the_same_group() -> None:
    h = Harness(StreamsConfig(num_standby_replicas=1, initial_rebalance_delay_ms=0, assignment_interval_ms=0))
    h.topics.create("words", 4)
    apps = [App("a"), App("b")]
    for app in apps:
        h.join(app)
    converge(h, apps)
    live = h.group()
    rebuilt = h.restart().get_streams_group("wordcount")
    assert rebuilt is not None
    assert rebuilt.state is live.state is StreamsGroupState.STABLE
    assert (rebuilt.group_epoch, rebuilt.assignment_epoch, rebuilt.topology) == (
        live.group_epoch,
        live.assignment_epoch,
        live.topology,
    )
    assert rebuilt.members == live.members
    assert rebuilt.target == live.target
    assert rebuilt.active_owners == live.active_owners
