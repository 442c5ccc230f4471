"""The KIP-848 server-side assignors (`uniform`, `range`): hypothesis properties over random members,
subscriptions, topics, racks and current assignments (Kafka's examples: test_assignors_examples.py)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.coordinator.consumer.assignors import Assignor, GroupAssignment, MemberSpec, TopicSpec
from kafkito.broker.coordinator.consumer.assignors.range_assignor import member_order
from tests.consumer_groups.assignor_checks import (
    RANGE,
    UNIFORM,
    Members,
    Owner,
    Topics,
    check_valid,
    owners_of,
    sizes,
    with_assigned,
)

RACKS = ("rack-a", "rack-b", "rack-c")


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
    assignor: Assignor, group: tuple[Members, Topics]
) -> None:
    members, topics = group
    check_valid(members, topics, assignor.assign(members, topics))


@pytest.mark.parametrize("assignor", [UNIFORM, RANGE], ids=lambda a: a.name)
@given(group=st.booleans().flatmap(lambda homogeneous: groups(homogeneous)), seed=st.integers(0, 1000))
def test_deterministic_whatever_the_input_order(
    assignor: Assignor, group: tuple[Members, Topics], seed: int
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
def test_rerunning_on_the_output_changes_nothing(assignor: Assignor, group: tuple[Members, Topics]) -> None:
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


# -- larger groups ---------------------------------------------------------------------------------


def large_group(seed: int, homogeneous: bool) -> tuple[Members, Topics]:
    """Hundreds of members over dozens of topics, with racks and a scrambled current assignment."""
    rng = random.Random(seed)
    topics: Topics = {}
    for index in range(rng.randint(5, 40)):
        topic_id = uuid.UUID(int=rng.getrandbits(128))
        count = rng.randint(0, 60)
        racks = {p: frozenset(rng.sample(RACKS, rng.randint(1, 2))) for p in range(count)}
        topics[topic_id] = TopicSpec(topic_id, f"topic-{index}", count, racks)
    ids = list(topics)
    common = frozenset(rng.sample(ids, rng.randint(1, len(ids))))
    members: Members = {}
    for index in range(rng.randint(50, 300)):
        subscribed = common if homogeneous else frozenset(rng.sample(ids, rng.randint(0, min(6, len(ids)))))
        assigned = {}
        for topic_id in rng.sample(ids, rng.randint(0, 3)):
            count = topics[topic_id].num_partitions
            assigned[topic_id] = frozenset(rng.sample(range(count + 1), rng.randint(0, count)))
        members[f"member-{index}-{rng.getrandbits(32):08x}"] = MemberSpec(
            subscribed, rng.choice((None, *RACKS)), None, assigned
        )
    return members, topics


@pytest.mark.parametrize("homogeneous", [True, False], ids=["homogeneous", "heterogeneous"])
@pytest.mark.parametrize("seed", range(6))
def test_uniform_on_larger_groups(seed: int, homogeneous: bool) -> None:
    members, topics = large_group(seed, homogeneous)
    result = UNIFORM.assign(members, topics)
    owners = check_valid(members, topics, result)
    counts = sizes(result)
    if homogeneous:
        assert max(counts.values()) - min(counts.values()) <= 1
    for (topic_id, _), owner in owners.items():
        least = min(counts[m] for m, spec in members.items() if topic_id in spec.subscribed_topic_ids)
        assert counts[owner] - least <= 1
    assert UNIFORM.assign(with_assigned(members, result), topics) == result
