"""The KIP-848 server-side assignors on Kafka's documented examples (exact assignments), rack
preference cases, and the parsing of `group.consumer.assignors`."""

from __future__ import annotations

import uuid

import pytest

from kafkito.broker.coordinator.consumer.assignors import ASSIGNORS, TopicSpec, parse_assignors
from tests.consumer_groups.assignor_checks import (
    RANGE,
    T1,
    T2,
    T3,
    T4,
    UNIFORM,
    check_valid,
    member,
    readable,
    sizes,
    topic_table,
    topics_of,
)

# -- table tests: Kafka's documented examples ------------------------------------------------------


def test_uniform_unbalanced_previous_assignment_is_rebalanced_keeping_the_lowest() -> None:
    topics = topic_table(3, 3)
    members = {
        "A": member(T1, T2, assigned={T1: {0, 1}, T2: {0, 1}}),
        "B": member(T1, T2, assigned={T1: {2}, T2: {2}}),
    }
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [0, 1], 2: [0]}, "B": {1: [2], 2: [1, 2]}}


def test_uniform_a_member_joining_takes_the_surplus_of_the_others() -> None:
    topics = topic_table(3, 3)
    members = {
        "A": member(T1, T2, assigned={T1: {0, 2}, T2: {0}}),
        "B": member(T1, T2, assigned={T1: {1}, T2: {1, 2}}),
        "C": member(T1, T2),
    }
    assert readable(UNIFORM.assign(members, topics)) == {
        "A": {1: [0, 2]},
        "B": {1: [1], 2: [1]},
        "C": {2: [0, 2]},
    }


def test_uniform_a_member_leaving_hands_its_partitions_to_the_others() -> None:
    topics = topic_table(3, 3)
    members = {
        "A": member(T1, T2, assigned={T1: {0}, T2: {0}}),
        "B": member(T1, T2, assigned={T1: {1}, T2: {1}}),
    }
    result = readable(UNIFORM.assign(members, topics))
    assert result == {"A": {1: [0, 2], 2: [0]}, "B": {1: [1], 2: [1, 2]}}


def test_uniform_more_members_than_partitions() -> None:
    topics = topic_table(2)
    members = {m: member(T1) for m in "ABC"}
    result = UNIFORM.assign(members, topics)
    assert sorted(sizes(result).values()) == [0, 1, 1]
    check_valid(members, topics, result)


def test_uniform_no_subscription_and_unknown_topics_get_nothing() -> None:
    topics = topic_table(3)
    assert UNIFORM.assign({"A": member()}, topics) == {"A": {}}
    assert UNIFORM.assign({"A": member(uuid.UUID(int=99))}, topics) == {"A": {}}
    assert RANGE.assign({"A": member(uuid.UUID(int=99))}, topics) == {"A": {}}
    assert UNIFORM.assign({}, topics) == {} == RANGE.assign({}, topics)


def test_uniform_partitions_of_an_unsubscribed_topic_are_revoked() -> None:
    """A drops topic2; B takes topic2 and, to stay balanced, gives topic1's partition 1 to A."""
    topics = topic_table(2, 2)
    members = {
        "A": member(T1, assigned={T1: {0}, T2: {0, 1}}),
        "B": member(T1, T2, assigned={T1: {1}}),
    }
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [0, 1]}, "B": {2: [0, 1]}}


# Kafka's heterogeneous examples: (partition counts, members as (subscription, current)), expected.
HETEROGENEOUS_EXAMPLES = {
    "first assignment, two members, two topics": (
        {T1: 3, T3: 6},
        {"A": ((T1, T3), {}), "B": ((T3,), {})},
        {"A": {1: [0, 1, 2], 3: [4]}, "B": {3: [0, 1, 2, 3, 5]}},
    ),
    "more members than partitions": (
        {T3: 1, T1: 2},
        {"A": ((T3,), {}), "B": ((T3,), {}), "C": ((T1,), {})},
        {"A": {3: [0]}, "B": {}, "C": {1: [0, 1]}},
    ),
    "unbalanced previous assignment": (
        {T1: 6, T2: 4, T3: 4},
        {
            "A": ((T1,), {T1: {0, 1, 2}}),
            "B": ((T1, T2), {T1: {3}, T2: {0}}),
            "C": ((T1, T2, T3), {T1: {4, 5}, T2: {1, 2, 3}, T3: {0, 1, 2, 3}}),
        },
        {"A": {1: [0, 1, 2, 5]}, "B": {1: [3], 2: [0, 1, 2, 3]}, "C": {1: [4], 3: [0, 1, 2, 3]}},
    ),
    "partitions added": (
        {T1: 6, T2: 5, T3: 3, T4: 3},
        {
            "A": ((T1, T3), {T1: {0, 1, 2, 3}, T3: {0, 1}}),
            "B": ((T1, T2, T3, T4), {T2: {0, 1, 2}, T4: {0, 1, 2}}),
        },
        {"A": {1: [0, 1, 2, 3, 4, 5], 3: [0, 1, 2]}, "B": {2: [0, 1, 2, 3, 4], 4: [0, 1, 2]}},
    ),
    "a member joins as partitions are added": (
        {T1: 6, T2: 7},
        {
            "A": ((T1,), {T1: {0, 2}, T2: {0}}),
            "B": ((T1, T2), {T1: {1}, T2: {1, 2}}),
            "C": ((T1, T2), {}),
        },
        {"A": {1: [0, 2, 3, 4, 5]}, "B": {1: [1], 2: [1, 2, 6]}, "C": {2: [0, 3, 4, 5]}},
    ),
}


@pytest.mark.parametrize("example", HETEROGENEOUS_EXAMPLES.values(), ids=HETEROGENEOUS_EXAMPLES.keys())
def test_uniform_heterogeneous_kafka_examples(
    example: tuple[
        dict[uuid.UUID, int],
        dict[str, tuple[tuple[uuid.UUID, ...], dict[uuid.UUID, set[int]]]],
        dict[str, dict[int, list[int]]],
    ],
) -> None:
    counts, spec, expected = example
    topics = topics_of(counts)
    members = {m: member(*subscribed, assigned=current) for m, (subscribed, current) in spec.items()}
    result = UNIFORM.assign(members, topics)
    check_valid(members, topics, result)
    assert readable(result) == expected


def test_uniform_rack_preference_when_balance_allows() -> None:
    racks = {0: frozenset({"a"}), 1: frozenset({"a"}), 2: frozenset({"b"}), 3: frozenset({"b"})}
    topics = topic_table(4, racks=racks)
    members = {"A": member(T1, rack="b"), "B": member(T1, rack="a")}
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [2, 3]}, "B": {1: [0, 1]}}


def test_uniform_rack_never_costs_balance() -> None:
    racks = dict.fromkeys(range(4), frozenset({"a"}))
    topics = topic_table(4, racks=racks)
    members = {"A": member(T1, rack="a"), "B": member(T1, rack="b")}
    assert sizes(UNIFORM.assign(members, topics)) == {"A": 2, "B": 2}


def test_uniform_over_quota_member_gives_up_partitions_off_its_rack_first() -> None:
    racks = {0: frozenset({"b"}), 1: frozenset({"a"}), 2: frozenset({"a"}), 3: frozenset({"b"})}
    topics = topic_table(4, racks=racks)
    members = {"A": member(T1, assigned={T1: {0, 1, 2, 3}}, rack="a"), "B": member(T1, rack="b")}
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [1, 2]}, "B": {1: [0, 3]}}


def test_uniform_heterogeneous_rack_preference_among_equally_loaded() -> None:
    racks = {0: frozenset({"b"}), 1: frozenset({"a"})}
    topics = {**topic_table(2, racks=racks), T2: TopicSpec(T2, "topic2", 0, {})}
    members = {"A": member(T1, rack="a"), "B": member(T1, T2, rack="b")}
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [1]}, "B": {1: [0]}}


def test_range_kafka_javadoc_example() -> None:
    """Two members, two topics of three partitions: M0 gets T1P0, T1P1, T2P0, T2P1; M1 gets T1P2, T2P2."""
    topics = topic_table(3, 3)
    members = {"M0": member(T1, T2), "M1": member(T1, T2)}
    assert readable(RANGE.assign(members, topics)) == {"M0": {1: [0, 1], 2: [0, 1]}, "M1": {1: [2], 2: [2]}}


def test_range_static_members_keep_their_ranges_after_a_rolling_bounce() -> None:
    """Kafka's example: M0 (I0) and M1 (I1) come back as M3 and M2; the ranges follow I0 and I1."""
    topics = topic_table(3, 3)
    before = RANGE.assign({"M0": member(T1, T2, instance="I0"), "M1": member(T1, T2, instance="I1")}, topics)
    after = RANGE.assign({"M3": member(T1, T2, instance="I0"), "M2": member(T1, T2, instance="I1")}, topics)
    assert after["M3"] == before["M0"]
    assert after["M2"] == before["M1"]


def test_range_heterogeneous_subscriptions() -> None:
    topics = topic_table(3, 3, 2)
    members = {"A": member(T1, T2), "B": member(T2, T3), "C": member(T1, T3)}
    assert readable(RANGE.assign(members, topics)) == {
        "A": {1: [0, 1], 2: [0, 1]},
        "B": {2: [2], 3: [0]},
        "C": {1: [2], 3: [1]},
    }


# -- group.consumer.assignors ----------------------------------------------------------------------


def test_parse_assignors_first_is_the_default() -> None:
    assert [a.name for a in parse_assignors("uniform,range")] == ["uniform", "range"]
    assert [a.name for a in parse_assignors(" range , uniform ")] == ["range", "uniform"]
    assert [a.name for a in parse_assignors("range")] == ["range"]
    assert parse_assignors("uniform")[0] is ASSIGNORS["uniform"]


def test_parse_assignors_accepts_kafkas_class_names() -> None:
    value = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
    assert [a.name for a in parse_assignors(value)] == ["range"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("uniform,sticky", "unknown assignor 'sticky'"),
        ("", "at least one"),
        (" , ", "at least one"),
        ("range,range", "listed twice"),
    ],
)
def test_parse_assignors_rejects_bad_lists(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_assignors(value)


def test_registry_names_match() -> None:
    assert {name: a.name for name, a in ASSIGNORS.items()} == {"uniform": "uniform", "range": "range"}


def test_uniform_heterogeneous_balancing_moves_partitions_off_the_givers_rack_first() -> None:
    """A holds all four partitions of topic1 (two on its rack); B, on the other rack, must take two:
    it takes the two off A's rack, and A keeps those on its own."""
    racks = {0: frozenset({"b"}), 1: frozenset({"a"}), 2: frozenset({"b"}), 3: frozenset({"a"})}
    topics = {**topic_table(4, racks=racks), T2: TopicSpec(T2, "topic2", 0, {})}
    members = {"A": member(T1, assigned={T1: {0, 1, 2, 3}}, rack="a"), "B": member(T1, T2, rack="b")}
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [1, 3]}, "B": {1: [0, 2]}}


def test_uniform_a_partition_on_several_racks_is_left_for_the_member_that_needs_it() -> None:
    """A (rack a) could take partition 0 (racks a and b) or 1 (rack a only); it takes 1, so that B
    (rack b) can have 0 on its rack."""
    racks = {0: frozenset({"a", "b"}), 1: frozenset({"a"})}
    topics = topic_table(2, racks=racks)
    members = {"A": member(T1, rack="a"), "B": member(T1, rack="b")}
    assert readable(UNIFORM.assign(members, topics)) == {"A": {1: [1]}, "B": {1: [0]}}
