"""KIP-848 subscription changes as Kafka's GroupMetadataManager handles them, in virtual time: a regex
the group never resolved is resolved after the heartbeat that brings it (that answer carries only
what the member's names and resolved regexes give), and a member's assignment follows its new
subscription at once, before any new target (CurrentAssignmentBuilder's subscription consistency)."""

from __future__ import annotations

import uuid

from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import Harness, Member, converge, heartbeat_request


def change(h: Harness, member: Member, topics: tuple[str, ...], regex: str) -> ConsumerHeartbeatRequest:
    """What librdkafka sends after subscribe(): the full request (names, regex, owned, timeout)."""
    return heartbeat_request(
        "g", member.member_id, member.epoch, topics=topics, regex=regex, owned=member.owned_wire(),
        rebalance_timeout_ms=30_000,
    )  # fmt: skip


def parts(assignment: object) -> dict[uuid.UUID, frozenset[int]]:
    assert assignment is not None
    return {t: frozenset(p) for t, p in assignment}  # type: ignore[attr-defined]


def test_a_new_regex_beside_a_topic_name_gets_the_named_topic_first_and_the_regex_topics_next() -> None:
    h = Harness()
    r1, r2 = h.topics.create("rx_1", 2), h.topics.create("rx_2", 2)
    a = h.topics.create("a", 2)
    m = Member("m", ("other",))
    h.join("g", m)
    converge(h, "g", [m])
    answer = h.heartbeat(change(h, m, ("a",), "rx_.*"))
    assert answer.error is ErrorCode.NONE
    assert parts(answer.assignment) == {a.topic_id: frozenset({0, 1})}
    m.epoch, m.owned = answer.member_epoch, parts(answer.assignment)
    assert "rx_.*" in h.group("g").regexes  # resolved once the answer was out: the epoch moved on
    nxt = h.beat("g", m)
    assert parts(nxt.assignment) == {t.topic_id: frozenset({0, 1}) for t in (a, r1, r2)}


def test_a_regex_already_resolved_in_the_group_is_assigned_on_the_heartbeat_that_brings_it() -> None:
    h = Harness()
    r1 = h.topics.create("rx_1", 2)
    a = h.topics.create("a", 2)
    other = Member("o", regex="rx_.*")
    m = Member("m", ("a",))
    for member in (other, m):
        h.join("g", member)
    converge(h, "g", [other, m])
    answer = h.heartbeat(change(h, m, ("a",), "rx_.*"))
    owned = parts(answer.assignment)
    assert set(owned) <= {a.topic_id, r1.topic_id} and answer.member_epoch == h.group("g").group_epoch


def test_leaving_a_regex_for_an_unresolved_one_revokes_its_topics_before_any_new_target() -> None:
    """No epoch bump here (another member keeps the old regex, the new one is not resolved yet): the
    member's old regex topics still leave its assignment on that heartbeat, as Kafka's
    subscription consistency does; the new regex's topics come once it is resolved."""
    h = Harness()
    old = h.topics.create("old_1", 4)
    new = h.topics.create("new_1", 2)
    other = Member("o", regex="old_.*")
    m = Member("m", regex="old_.*")
    for member in (other, m):
        h.join("g", member)
    converge(h, "g", [other, m])
    assert set(m.owned) == {old.topic_id}
    answer = h.heartbeat(change(h, m, (), "new_.*"))
    assert answer.error is ErrorCode.NONE and parts(answer.assignment) == {}
    assert h.group("g").members["m"].pending_revocation == m.owned
    m.owned = {}
    converge(h, "g", [other, m])
    assert m.owned == {new.topic_id: frozenset({0, 1})}
    assert other.owned == {old.topic_id: frozenset(range(4))}
