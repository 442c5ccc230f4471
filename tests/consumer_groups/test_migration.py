"""Online migration (group.consumer.migration.policy): a classic group turns into a consumer group
when a consumer-protocol member joins it, and back when the last one leaves."""

from __future__ import annotations

import dataclasses

from kafkito.broker.coordinator import CoordinatorConfig, JoinGroupRequest, SyncGroupRequest
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.consumer.classic_protocol import encode_assignment
from kafkito.broker.coordinator.results import JoinGroupResult, SyncGroupResult
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import Harness, Member, heartbeat_request
from tests.consumer_groups.test_classic_members import SESSION, decode_assignment
from tests.coordinator.harness import subscription


class ClassicClient:
    """An eager classic consumer: joins (waiting out parked joins), syncs, heartbeats."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.member_id = ""
        self.generation = -1
        self.owned: set[int] = set()

    def join(self) -> JoinGroupResult:
        replies: list[JoinGroupResult] = []
        request = JoinGroupRequest(
            "g", self.member_id, None, "classic", "/h", 30_000, SESSION, "consumer",
            (("range", subscription("t")),), api_version=5,
        )  # fmt: skip
        self.h.coordinator.join_group(request, replies.append)
        for _ in range(10):  # a classic join may be parked (initial delay)
            if replies:
                break
            self.h.clock.advance(1000)
        result = replies[0]
        if result.error is ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = result.member_id
            return self.join()
        assert result.error is ErrorCode.NONE, result
        self.owned = set()
        self.generation = result.generation_id
        return result

    def sync(self, leader_assignment: dict[str, bytes] | None = None) -> SyncGroupResult:
        replies: list[SyncGroupResult] = []
        request = SyncGroupRequest(
            "g", self.generation, self.member_id, None, "consumer", "range", leader_assignment or {}
        )
        self.h.coordinator.sync_group(request, replies.append)
        assert replies and replies[0].error is ErrorCode.NONE, replies
        self.owned = decode_assignment(replies[0].assignment).get("t", set())
        return replies[0]

    def heartbeat(self) -> ErrorCode:
        return self.h.coordinator.heartbeat("g", self.member_id, None, self.generation)

    def rebalance(self) -> None:
        joined = self.join()
        everything = {self.member_id: encode_assignment({"t": (0, 1, 2, 3)})}
        self.sync(everything if joined.leader_id == self.member_id else None)


def _stable_classic_group(h: Harness) -> ClassicClient:
    h.topics.create("t", 4)
    client = ClassicClient(h)
    client.rebalance()
    group = h.coordinator.get_group("g")
    assert group is not None and group.is_(GroupState.STABLE)
    assert client.owned == {0, 1, 2, 3}
    return client


def test_a_classic_group_upgrades_and_downgrades_online() -> None:
    h = Harness()
    classic = _stable_classic_group(h)
    generation = classic.generation
    a = Member("a", ("t",))
    joined = h.join("g", a)
    assert joined.error is ErrorCode.NONE
    group = h.group("g")
    assert h.coordinator.get_group("g") is None  # one namespace: now a consumer group
    assert group.group_epoch == generation + 1
    assert group.members[classic.member_id].classic_member is not None
    assert a.owned == {}  # the classic member still holds everything
    # The classic member learns of the rebalance, rejoins (eager: owning nothing) and keeps half.
    assert classic.heartbeat() is ErrorCode.REBALANCE_IN_PROGRESS
    classic.rebalance()
    assert len(classic.owned) == 2
    h.beat("g", a)
    topic = h.topics.by_name("t")
    assert topic is not None
    assert not (a.owned.get(topic.topic_id, frozenset()) & classic.owned)
    assert classic.heartbeat() is ErrorCode.NONE
    assert h.group("g").state.value == "Stable"
    # The last consumer-protocol member leaves: the group is classic again, and rebalances.
    assert h.heartbeat(heartbeat_request("g", "a", -1)).error is ErrorCode.NONE
    assert h.coordinator.get_consumer_group("g") is None
    back = h.coordinator.get_group("g")
    assert back is not None and back.is_(GroupState.PREPARING_REBALANCE)
    assert classic.heartbeat() is ErrorCode.REBALANCE_IN_PROGRESS
    classic.rebalance()
    assert classic.owned == {0, 1, 2, 3}
    assert back.is_(GroupState.STABLE)
    # A restart sees a classic group, not a consumer group.
    fresh = h.restart()
    assert fresh.get_consumer_group("g") is None and fresh.get_group("g") is not None


def test_no_upgrade_when_the_policy_forbids_it() -> None:
    h = Harness(config=dataclasses.replace(CoordinatorConfig(), group_consumer_migration_policy="downgrade"))
    _stable_classic_group(h)
    result = h.join("g", Member("a", ("t",)))
    assert result.error is ErrorCode.GROUP_ID_NOT_FOUND
    assert result.error_message is not None and "disabled" in result.error_message
    assert h.coordinator.get_consumer_group("g") is None


def test_no_downgrade_when_the_policy_forbids_it() -> None:
    h = Harness(config=dataclasses.replace(CoordinatorConfig(), group_consumer_migration_policy="upgrade"))
    classic = _stable_classic_group(h)
    a = Member("a", ("t",))
    h.join("g", a)
    classic.heartbeat()
    classic.rebalance()
    h.heartbeat(heartbeat_request("g", "a", -1))
    group = h.group("g")
    assert list(group.members) == [classic.member_id]


def test_an_upgrade_mid_rebalance_sends_the_parked_members_to_the_consumer_group() -> None:
    h = Harness()
    first = _stable_classic_group(h)
    second = ClassicClient(h)
    parked: list[JoinGroupResult] = []
    request = JoinGroupRequest(
        "g", "", "second-instance", "classic", "/h", 30_000, SESSION, "consumer",
        (("range", subscription("t")),), api_version=5,
    )  # fmt: skip
    h.coordinator.join_group(request, parked.append)  # static: no MEMBER_ID_REQUIRED round trip
    group = h.coordinator.get_group("g")
    assert group is not None and group.is_(GroupState.PREPARING_REBALANCE) and not parked
    a = Member("a", ("t",))
    assert h.join("g", a).error is ErrorCode.NONE
    assert [r.error for r in parked] == [ErrorCode.REBALANCE_IN_PROGRESS]
    assert group.is_(GroupState.DEAD)
    consumer = h.group("g")
    assert len(consumer.members) == 3
    # Everyone settles as members of the consumer group, each partition owned once.
    second.member_id = next(m for m in consumer.members if m.startswith("second-instance"))
    for _ in range(6):
        for client in (first, second):
            if client.heartbeat() is not ErrorCode.NONE:
                client.rebalance()
        h.beat("g", a)
    owned = [first.owned, second.owned, {p for ps in a.owned.values() for p in ps}]
    assert sorted(p for o in owned for p in o) == [0, 1, 2, 3]
    assert h.group("g").state.value == "Stable"
