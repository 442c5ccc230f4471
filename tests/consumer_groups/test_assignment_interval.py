"""Virtual-time tests of KIP-848 assignment batching (`group.consumer.assignment.interval.ms`, Kafka's
canComputeNextTargetAssignment): a heartbeat computes a new target assignment only when the group never
had one, the interval is 0, or the interval has passed since the last one; the others reconcile against
the last target, so a burst of joins costs one assignor run per interval."""

from __future__ import annotations

import dataclasses

from kafkito.broker.coordinator import CoordinatorConfig
from kafkito.broker.coordinator.consumer.records import ConsumerGroupTargetAssignmentMetadataRecord
from kafkito.broker.coordinator.consumer.state import ConsumerGroupState
from kafkito.broker.offsets.consumer_records import (
    TargetAssignmentMetadataValue,
    decode_consumer_value,
    encode_consumer_value,
)
from tests.consumer_groups.harness import Harness, Member, converge, owned_by_two

NOW_MS = 1_764_000_000_000  # a broker clock tells epoch milliseconds; 0 would mean "never assigned"
INTERVAL_MS = 1000  # Kafka's default


def _targets(h: Harness) -> list[ConsumerGroupTargetAssignmentMetadataRecord]:
    return [r for r in h.sink.records if isinstance(r, ConsumerGroupTargetAssignmentMetadataRecord)]


def _group_of_one(config: CoordinatorConfig | None = None) -> tuple[Harness, Member]:
    h = Harness(config, start_ms=NOW_MS)
    h.topics.create("t", 6)
    a = Member("a", ("t",))
    h.join("g", a)
    return h, a


def test_the_default_interval_is_kafkas() -> None:
    assert CoordinatorConfig().group_consumer_assignment_interval_ms == INTERVAL_MS


def test_joins_within_the_interval_wait_for_one_assignment_run() -> None:
    h, a = _group_of_one()
    assert [(r.assignment_epoch, r.assignment_timestamp_ms) for r in _targets(h)] == [(2, NOW_MS)]
    b, c = Member("b", ("t",)), Member("c", ("t",))
    h.clock.advance(100)
    joined_b = h.join("g", b)
    h.clock.advance(100)
    joined_c = h.join("g", c)
    group = h.group("g")
    # Two joins bumped the group epoch twice; neither ran the assignor: the newcomers are at the last
    # target's epoch with nothing assigned, and the group is Assigning.
    assert (group.group_epoch, group.assignment_epoch) == (4, 2)
    assert (joined_b.member_epoch, joined_c.member_epoch) == (2, 2)
    assert b.owned == {} and c.owned == {}
    assert group.state is ConsumerGroupState.ASSIGNING
    assert len(_targets(h)) == 1
    # A heartbeat before the interval has passed changes nothing either.
    h.clock.advance(INTERVAL_MS - 201)
    h.beat("g", a)
    assert len(_targets(h)) == 1 and h.group("g").assignment_epoch == 2
    # The first heartbeat once it has passed computes one target for both joins.
    h.clock.advance(1)
    h.beat("g", a)
    assert [(r.assignment_epoch, r.assignment_timestamp_ms) for r in _targets(h)][1:] == [
        (4, NOW_MS + INTERVAL_MS)
    ]
    converge(h, "g", [a, b, c])
    assert len(_targets(h)) == 2
    assert sorted(sum(len(p) for p in m.owned.values()) for m in (a, b, c)) == [2, 2, 2]
    assert not owned_by_two([a, b, c])


def test_an_interval_of_zero_assigns_at_every_change() -> None:
    config = dataclasses.replace(CoordinatorConfig(), group_consumer_assignment_interval_ms=0)
    h, _a = _group_of_one(config)
    b = Member("b", ("t",))
    h.clock.advance(1)
    joined = h.join("g", b)
    assert joined.member_epoch == 3
    assert h.group("g").assignment_epoch == 3
    assert [r.assignment_epoch for r in _targets(h)] == [2, 3]


def test_a_restarted_coordinator_keeps_counting_from_the_last_assignment() -> None:
    h, _a = _group_of_one()
    h.clock.advance(500)
    fresh = h.restart()
    group = fresh.get_consumer_group("g")
    assert group is not None
    assert (group.assignment_epoch, group.assignment_timestamp_ms) == (2, NOW_MS)


def test_the_assignment_timestamp_is_tagged_field_zero_as_kafka_writes_it() -> None:
    value = TargetAssignmentMetadataValue(7, NOW_MS)
    encoded = encode_consumer_value(value)
    # version 0, epoch, one tagged field: tag 0, 8 bytes, the int64 timestamp.
    assert encoded == b"\x00\x00" + (7).to_bytes(4, "big") + b"\x01\x00\x08" + NOW_MS.to_bytes(8, "big")
    assert decode_consumer_value(6, encoded) == value
    # Never computed (0): no tagged field, as Kafka leaves out a tagged field at its default.
    assert (
        encode_consumer_value(TargetAssignmentMetadataValue(7))
        == b"\x00\x00" + (7).to_bytes(4, "big") + b"\x00"
    )
