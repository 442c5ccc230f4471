"""The KIP-848 server-side assignors (`uniform`, `range`): hypothesis properties over random members,
subscriptions, topics, racks and current assignments, and table tests with Kafka's examples."""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator.consumer.assignors import (
    ASSIGNORS,
    GroupAssignment,
    MemberSpec,
    RangeAssignor,
    TopicSpec,
    UniformAssignor,
    parse_assignors,
)
from kafkito.broker.coordinator.consumer.assignors.range_assignor import member_order

UNIFORM = UniformAssignor()
RANGE = RangeAssignor()
RACKS = ("rack-a", "rack-b", "rack-c")

Members = dict[str, MemberSpec]
Topics = dict[uuid.UUID, TopicSpec]
Owner = dict[tuple[uuid.UUID, int], str]


# -- strategies ------------------------------------------------------------------------------------


@st.composite
def topic_sets(draw: st.DrawFn, max_topics: int = 5, max_partitions: int = 12) -> Topics:
    count = draw(st.integers(1, max_topics))
    with_racks = draw(st.booleans())
    topics: Topics = {}
    for index in range(count):
        topic_id = uuid.UUID(int=draw(st.integers(1, 2**64)))
        partitions = draw(st.integers(0, max_partitions))
        racks: dict[int, frozenset[str]] = {}
        if with_racks:
            for partition in range(partitions):
                racks[partition] = frozenset(draw(st.sets(st.sampled_from(RACKS), min_size=1, max_size=2)))
        topics[topic_id] = TopicSpec(topic_id, f"topic-{index}", partitions, racks)
    return topics


@st.composite
def current_assignment(
    draw: st.DrawFn, topics: Topics, extra_ids: list[uuid.UUID]
) -> dict[uuid.UUID, frozenset[int]]:
    """Anything a member may hold: valid partitions, partitions past the end, unknown topics."""
    choices = [*topics, *extra_ids]
    chosen = draw(st.sets(st.sampled_from(choices), max_size=len(choices)))
    result = {}
    for topic_id in chosen:
        top = topics[topic_id].num_partitions + 2 if topic_id in topics else 3
        partitions = draw(st.frozensets(st.integers(0, top), max_size=top))
        if partitions:
            result[topic_id] = partitions
    return result


@st.composite
def groups(draw: st.DrawFn, homogeneous: bool, max_members: int = 8) -> tuple[Members, Topics]:
    """Members with random ids, racks and instance ids, subscriptions (the same for all when
    `homogeneous`, sometimes naming a topic that does not exist) and current assignments (which may
    overlap: the assignor must cope)."""
    topics = draw(topic_sets())
    unknown = [uuid.UUID(int=0xDEAD)]
    subscribable = [*topics, *unknown]
    common = draw(st.frozensets(st.sampled_from(subscribable), min_size=1))
    ids = draw(
        st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=1, max_size=max_members, unique=True)
    )
    with_current = draw(st.booleans())
    members: Members = {}
    for member_id in ids:
        subscribed = common if homogeneous else draw(st.frozensets(st.sampled_from(subscribable)))
        rack = draw(st.none() | st.sampled_from(RACKS))
        instance = draw(st.none() | st.text("xyz", min_size=1, max_size=3))
        assigned = draw(current_assignment(topics, unknown)) if with_current else {}
        members[member_id] = MemberSpec(subscribed, rack, instance, assigned)
    return members, topics


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


def moves(before: Owner, after: Owner) -> int:
    return sum(1 for tp, owner in before.items() if after.get(tp, owner) != owner)


def claims(members: Members, topics: Topics) -> Owner:
    """The current partitions members may keep (subscribed, existing, first claimant in member-id
    order wins a partition two members claim), as the uniform assignor reads them."""
    claimed: Owner = {}
    for member_id in sorted(members):
        spec = members[member_id]
        for topic_id, partitions in spec.assigned.items():
            if topic_id not in topics or topic_id not in spec.subscribed_topic_ids:
                continue
            for partition in partitions:
                if partition < topics[topic_id].num_partitions:
                    claimed.setdefault((topic_id, partition), member_id)
    return claimed


def claim_counts(members: Members, claimed: Owner) -> dict[str, int]:
    counts = dict.fromkeys(members, 0)
    for member_id in claimed.values():
        counts[member_id] += 1
    return counts


def max_keepable(current: Mapping[str, int], total: int, member_count: int) -> int:
    """The most current partitions that can stay put in a balanced assignment."""
    minimum, extra = divmod(total, member_count)
    above = sum(1 for count in current.values() if count > minimum)
    return sum(min(count, minimum) for count in current.values()) + min(extra, above)


def kept(claimed: Owner, result: GroupAssignment) -> int:
    owners = owners_of(result)
    return sum(1 for tp, member_id in claimed.items() if owners.get(tp) == member_id)


# -- both assignors --------------------------------------------------------------------------------


@pytest.mark.parametrize("assignor", [UNIFORM, RANGE], ids=lambda a: a.name)
@given(group=st.booleans().flatmap(lambda homogeneous: groups(homogeneous)))
@settings(max_examples=300)
def test_every_subscribed_partition_is_assigned_once_to_a_subscriber(
    assignor: UniformAssignor | RangeAssignor, group: tuple[Members, Topics]
) -> None:
    members, topics = group
    check_valid(members, topics, assignor.assign(members, topics))


@pytest.mark.parametrize("assignor", [UNIFORM, RANGE], ids=lambda a: a.name)
@given(group=st.booleans().flatmap(lambda homogeneous: groups(homogeneous)), seed=st.integers(0, 1000))
def test_deterministic_whatever_the_input_order(
    assignor: UniformAssignor | RangeAssignor, group: tuple[Members, Topics], seed: int
) -> None:
    members, topics = group
    first = assignor.assign(members, topics)
    shuffled_members = list(members.items())
    shuffled_topics = list(topics.items())
    random.Random(seed).shuffle(shuffled_members)
    random.Random(seed).shuffle(shuffled_topics)
    assert assignor.assign(dict(shuffled_members), dict(shuffled_topics)) == first


@pytest.mark.parametrize("assignor", [UNIFORM, RANGE], ids=lambda a: a.name)
@given(group=st.booleans().flatmap(lambda homogeneous: groups(homogeneous)))
def test_rerunning_on_the_output_changes_nothing(
    assignor: UniformAssignor | RangeAssignor, group: tuple[Members, Topics]
) -> None:
    members, topics = group
    first = assignor.assign(members, topics)
    assert assignor.assign(with_assigned(members, first), topics) == first


# -- uniform, homogeneous --------------------------------------------------------------------------


def subscribed_total(members: Members, topics: Topics) -> int:
    subscribed = {t for spec in members.values() for t in spec.subscribed_topic_ids if t in topics}
    return sum(topics[t].num_partitions for t in subscribed)


@given(group=groups(homogeneous=True))
@settings(max_examples=300)
def test_uniform_homogeneous_is_balanced_and_keeps_all_that_balance_allows(
    group: tuple[Members, Topics],
) -> None:
    members, topics = group
    result = UNIFORM.assign(members, topics)
    counts = sizes(result).values()
    assert max(counts) - min(counts) <= 1
    total = subscribed_total(members, topics)
    claimed = claims(members, topics)
    assert kept(claimed, result) == max_keepable(claim_counts(members, claimed), total, len(members))


@given(group=groups(homogeneous=True), joiner=st.text("ijk", min_size=1, max_size=3))
def test_uniform_homogeneous_join_moves_the_fewest_partitions(
    group: tuple[Members, Topics], joiner: str
) -> None:
    members, topics = group
    before = with_assigned(members, UNIFORM.assign(members, topics))
    subscription = next(iter(members.values())).subscribed_topic_ids
    joined = {**before, joiner: MemberSpec(subscription, None, None, {})}
    after = UNIFORM.assign(joined, topics)
    owned_before = owners_of({m: dict(spec.assigned) for m, spec in before.items()})
    current = sizes({m: dict(spec.assigned) for m, spec in joined.items()})
    minimal = len(owned_before) - max_keepable(current, len(owned_before), len(joined))
    assert moves(owned_before, owners_of(after)) == minimal


@given(group=groups(homogeneous=True), data=st.data())
def test_uniform_homogeneous_leave_moves_only_the_leavers_partitions(
    group: tuple[Members, Topics], data: st.DataObject
) -> None:
    members, topics = group
    before = with_assigned(members, UNIFORM.assign(members, topics))
    leaver = data.draw(st.sampled_from(sorted(before)))
    remaining = {m: spec for m, spec in before.items() if m != leaver}
    after = UNIFORM.assign(remaining, topics)
    for member_id, spec in remaining.items():
        for topic_id, partitions in spec.assigned.items():
            assert partitions <= after[member_id].get(topic_id, frozenset())


# -- uniform, heterogeneous ------------------------------------------------------------------------


@given(group=groups(homogeneous=False))
@settings(max_examples=300)
def test_uniform_heterogeneous_no_single_move_narrows_a_gap(group: tuple[Members, Topics]) -> None:
    """For every topic, no holder of one of its partitions has two or more partitions more than
    another subscriber of that topic (moving it would improve the balance)."""
    members, topics = group
    result = UNIFORM.assign(members, topics)
    owners = check_valid(members, topics, result)
    counts = sizes(result)
    for (topic_id, _), owner in owners.items():
        least = min(counts[m] for m, spec in members.items() if topic_id in spec.subscribed_topic_ids)
        assert counts[owner] - least <= 1


@given(group=groups(homogeneous=False))
def test_uniform_heterogeneous_keeps_every_current_partition_it_can(group: tuple[Members, Topics]) -> None:
    """When nothing needs balancing, nothing moves: a member keeps the partitions it already holds."""
    members, topics = group
    result = UNIFORM.assign(members, topics)
    reshuffled = UNIFORM.assign(with_assigned(members, result), topics)
    assert reshuffled == result


# -- range -----------------------------------------------------------------------------------------


@given(group=st.booleans().flatmap(lambda homogeneous: groups(homogeneous)))
@settings(max_examples=300)
def test_range_gives_contiguous_ranges_in_member_order(group: tuple[Members, Topics]) -> None:
    members, topics = group
    result = RANGE.assign(members, topics)
    order = member_order(members)
    for topic_id, topic in topics.items():
        subscribers = [m for m in order if topic_id in members[m].subscribed_topic_ids]
        if not subscribers:
            continue
        minimum, extra = divmod(topic.num_partitions, len(subscribers))
        start = 0
        for position, member_id in enumerate(subscribers):
            size = minimum + (1 if position < extra else 0)
            assert result[member_id].get(topic_id, frozenset()) == frozenset(range(start, start + size))
            start += size


@given(group=groups(homogeneous=True), partitions=st.integers(1, 9))
def test_range_co_partitions_topics_with_equal_partition_counts(
    group: tuple[Members, Topics], partitions: int
) -> None:
    members, topics = group
    topics = {t: spec._replace(num_partitions=partitions) for t, spec in topics.items()}
    result = RANGE.assign(members, topics)
    for assignment in result.values():
        assert len(set(assignment.values())) <= 1


@given(group=groups(homogeneous=True))
def test_range_static_members_keep_their_ranges_under_new_member_ids(group: tuple[Members, Topics]) -> None:
    members, topics = group
    static = {m: spec._replace(instance_id=f"instance-{m}") for m, spec in members.items()}
    renamed = {f"new-{m}": spec for m, spec in reversed(list(static.items()))}
    first = RANGE.assign(static, topics)
    second = RANGE.assign(renamed, topics)
    assert {f"new-{m}": a for m, a in first.items()} == second


# -- table tests: Kafka's documented examples ------------------------------------------------------

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)
T3 = uuid.UUID(int=3)


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


T4 = uuid.UUID(int=4)


def topics_of(counts: Mapping[uuid.UUID, int]) -> Topics:
    return {t: TopicSpec(t, f"topic{t.int}", count, {}) for t, count in counts.items()}


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
