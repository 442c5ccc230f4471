"""One group of one member per client, sharing partitions with the range assignor."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import Consumer, Driver
from tests.compat.groups import consumed, stop_all, wait_balanced, wait_consumed
from tests.compat.harness import run_together
from tests.compat.matrix import Matrix
from tests.compat.naming import slug
from tests.compat.records import Rec, assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker

PARTITIONS = 10
SCENARIO = "cross-client-group"


def contiguous(partitions: frozenset[int] | None) -> bool:
    return bool(partitions) and max(partitions) - min(partitions) + 1 == len(partitions)  # type: ignore[arg-type]


def test_cross_client_group_with_range_assignor(
    matrix: Matrix, drivers: list[Driver], default_delay_broker: ProcessBroker
) -> None:
    """All members start together on a broker with Kafka's default initial rebalance delay, so they
    form the first generation together; whichever client leads assigns for everyone. Then one leaves
    and the rest take its partitions over from its commits."""
    bootstrap = default_delay_broker.bootstrap
    topic, group = "cross-client", "g-cross-client"

    def body() -> str | None:
        ref.create_topic(bootstrap, topic, PARTITIONS)
        members: list[Consumer] = [
            d.member(bootstrap, group, topic, f"cross-{slug(d)}", assignor="range") for d in drivers
        ]
        sent: list[Rec] = []

        def produce(tag: str) -> None:
            batch = numbered(tag, 100, PARTITIONS, start=len(sent))
            ref.produce(bootstrap, topic, batch)
            sent.extend(batch)

        try:
            for m in members:
                m.start()
            wait_balanced(members, PARTITIONS)
            generations = {m.name: len(m.feed.assignments) for m in members}
            ranges = {m.name: sorted(m.feed.assignment or ()) for m in members}
            assert all(contiguous(m.feed.assignment) for m in members), f"not range assignments: {ranges}"
            produce("together")
            wait_consumed(members, sent)
            members[0].stop()
            produce("after-leave")
            wait_balanced(members[1:], PARTITIONS, "the others share the partitions after one left")
            assert all(contiguous(m.feed.assignment) for m in members[1:]), "not range assignments"
            wait_consumed(members, sent)
        finally:
            stop_all([m for m in members if not m.feed.closed.is_set()])
        assert_exactly_once(sent, consumed(members))
        ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
        assert ref.committed(bootstrap, group, topic, PARTITIONS) == ends
        one_generation = all(n == 1 for n in generations.values())
        return (
            None if one_generation else f"the first assignments took more than one generation: {generations}"
        )

    run_together(matrix, SCENARIO, drivers, body)
