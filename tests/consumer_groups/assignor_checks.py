"""Shared by the assignor tests: the two assignors, the checks every assignment must pass, and
helpers to write members and topics as tables."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from kafkito.broker.coordinator.consumer.assignors import (
    GroupAssignment,
    MemberSpec,
    RangeAssignor,
    TopicSpec,
    UniformAssignor,
)

UNIFORM = UniformAssignor()
RANGE = RangeAssignor()

Members = dict[str, MemberSpec]
Topics = dict[uuid.UUID, TopicSpec]
Owner = dict[tuple[uuid.UUID, int], str]


# -- checks ----------------------------------------------------------------------------------------


def owners_of(result: GroupAssignment) -> Owner:
    owners: Owner = {}
    for member_id, assignment in result.items():
        for topic_id, partitions in assignment.items():
            assert partitions, "no empty partition sets"
            for partition in partitions:
                assert (topic_id, partition) not in owners, "a partition is assigned twice"
                owners[(topic_id, partition)] = member_id
    return owners


def check_valid(
    members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec], result: GroupAssignment
) -> Owner:
    """Every member is in the result; every partition of a subscribed topic is assigned exactly once,
    to a subscriber; nothing else is assigned."""
    assert set(result) == set(members)
    owners = owners_of(result)
    expected = {
        (topic_id, partition)
        for spec in members.values()
        for topic_id in spec.subscribed_topic_ids
        if topic_id in topics
        for partition in range(topics[topic_id].num_partitions)
    }
    assert set(owners) == expected
    for (topic_id, _), member_id in owners.items():
        assert topic_id in members[member_id].subscribed_topic_ids
    return owners


def sizes(result: GroupAssignment) -> dict[str, int]:
    return {member_id: sum(map(len, assignment.values())) for member_id, assignment in result.items()}


def with_assigned(members: Mapping[str, MemberSpec], result: GroupAssignment) -> Members:
    return {member_id: spec._replace(assigned=result[member_id]) for member_id, spec in members.items()}


# -- tables ----------------------------------------------------------------------------------------

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)
T3 = uuid.UUID(int=3)
T4 = uuid.UUID(int=4)


def topic_table(*counts: int, racks: Mapping[int, frozenset[str]] | None = None) -> Topics:
    ids = (T1, T2, T3)
    return {ids[i]: TopicSpec(ids[i], f"topic{i + 1}", count, racks or {}) for i, count in enumerate(counts)}


def member(
    *subscribed: uuid.UUID,
    assigned: Mapping[uuid.UUID, set[int]] | None = None,
    rack: str | None = None,
    instance: str | None = None,
) -> MemberSpec:
    current = {topic_id: frozenset(partitions) for topic_id, partitions in (assigned or {}).items()}
    return MemberSpec(frozenset(subscribed), rack, instance, current)


def readable(result: GroupAssignment) -> dict[str, dict[int, list[int]]]:
    return {m: {t.int: sorted(p) for t, p in a.items()} for m, a in result.items()}


def topics_of(counts: Mapping[uuid.UUID, int]) -> Topics:
    return {t: TopicSpec(t, f"topic{t.int}", count, {}) for t, count in counts.items()}
