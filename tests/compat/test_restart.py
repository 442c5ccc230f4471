"""A broker restart in the middle of every client's group: members come back, offsets are kept."""

from __future__ import annotations

import threading

from tests.compat import reference as ref
from tests.compat.clients.base import DEADLINE_S, Consumer, Driver, wait_for_consumers
from tests.compat.groups import consumed, stop_all, wait_balanced, wait_consumed
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import group_for, slug, topic_for
from tests.compat.records import assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker

PARTITIONS = 4
SCENARIO = "broker-restart"


def test_broker_restart_in_the_middle_of_groups(
    matrix: Matrix, drivers: list[Driver], restartable_broker: ProcessBroker
) -> None:
    """Each client runs a group of two on one broker; once every group has consumed and committed its
    first records, the broker is stopped and started again (one restart for all clients); then each
    group must carry on from its committed offsets: nothing lost, nothing consumed twice."""
    broker = restartable_broker
    bootstrap = broker.bootstrap
    taking_part = [d for d in drivers if SCENARIO not in d.not_applicable]

    def restart_broker() -> None:
        broker.restart()

    # The last client to be ready restarts the broker, then everyone goes on.
    restart = threading.Barrier(len(taking_part), action=restart_broker, timeout=DEADLINE_S)

    def body(d: Driver) -> str | None:
        topic, group = topic_for("restart", d), group_for("restart", d)
        members: list[Consumer] = []
        try:
            ref.create_topic(bootstrap, topic, PARTITIONS)
            members += [d.member(bootstrap, group, topic, f"{slug(d)}-restart-{i}").start() for i in range(2)]
            wait_balanced(members, PARTITIONS)
            before = numbered("before", 40, PARTITIONS)
            ref.produce(bootstrap, topic, before)
            wait_consumed(members, before)
            ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
            wait_for_consumers(
                lambda: ref.committed(bootstrap, group, topic, PARTITIONS) == ends,
                "offsets committed",
                members,
            )
        except BaseException:
            restart.abort()
            raise
        restart.wait()
        try:
            assert ref.committed(bootstrap, group, topic, PARTITIONS) == ends, (
                "committed offsets after the restart"
            )
            after = numbered("after", 40, PARTITIONS, start=40)
            ref.produce(bootstrap, topic, after)
            wait_consumed(members, before + after, "records produced after the restart")
            wait_balanced(members, PARTITIONS, "both members in the group after the restart")
            ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
            wait_for_consumers(
                lambda: ref.committed(bootstrap, group, topic, PARTITIONS) == ends,
                "offsets committed",
                members,
            )
            state = ref.describe_group(bootstrap, group)
            assert (state.state, state.members) == ("Stable", 2), state
        finally:
            stop_all(members)
        assert_exactly_once(before + after, consumed(members))
        return None

    run_for_clients(matrix, SCENARIO, drivers, body)
