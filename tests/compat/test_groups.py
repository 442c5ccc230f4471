"""Consumer groups of one client: rebalances with exactly-once commits, committed offsets, admin views."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import Consumer, Driver, wait_for_consumers
from tests.compat.groups import consumed, stop_all, wait_balanced, wait_consumed
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import group_for, slug, topic_for
from tests.compat.records import Rec, assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker

PARTITIONS = 6


def test_group_of_three_rebalances_and_consumes_each_record_once(
    matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker
) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic, group = topic_for("group", d), group_for("group", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        everyone: list[Consumer] = []
        sent: list[Rec] = []

        def join(i: int) -> Consumer:
            member = d.member(bootstrap, group, topic, f"{slug(d)}-member-{i}").start()
            everyone.append(member)
            return member

        def produce(tag: str) -> None:
            batch = numbered(tag, 60, PARTITIONS, start=len(sent))
            ref.produce(bootstrap, topic, batch)
            sent.extend(batch)

        try:
            members = [join(i) for i in range(3)]
            wait_balanced(members, PARTITIONS)
            produce("first")
            wait_consumed(everyone, sent)
            leaving = members.pop(0)
            leaving.stop()
            produce("after-leave")  # while the others rebalance
            wait_balanced(members, PARTITIONS, "two members after one left")
            wait_consumed(everyone, sent)
            members.append(join(3))
            produce("after-join")  # while the group rebalances
            wait_balanced(members, PARTITIONS, "three members after one joined")
            wait_consumed(everyone, sent)
        finally:
            stop_all([m for m in everyone if not m.feed.closed.is_set()])
        assert_exactly_once(sent, consumed(everyone))
        ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
        assert ref.committed(bootstrap, group, topic, PARTITIONS) == ends, (
            "committed offsets are the end offsets"
        )
        return None

    run_for_clients(matrix, "group-rebalance", drivers, body)


def test_commit_and_fetch_committed_offsets(
    matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker
) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic, group = topic_for("commit", d), group_for("commit", d)
        ref.create_topic(bootstrap, topic, 3)
        ref.produce(bootstrap, topic, numbered("c", 30, 3))
        offsets = {0: 3, 1: 7, 2: 1}
        assert d.commit_and_fetch(bootstrap, group, topic, offsets) == offsets
        assert ref.committed(bootstrap, group, topic, 3) == offsets
        return None

    run_for_clients(matrix, "commit-fetch", drivers, body)


def test_list_and_describe_groups(
    matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker
) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic, group = topic_for("describe", d), group_for("describe", d)
        ref.create_topic(bootstrap, topic, 4)
        name = f"{slug(d)}-solo"
        member = d.member(bootstrap, group, topic, name).start()
        try:
            wait_for_consumers(
                lambda: member.feed.assignment == frozenset(range(4)),
                "the member owns every partition",
                [member],
            )
            live = d.describe_group(bootstrap, group)
        finally:
            member.stop()
        assert live.listed, f"{group} is not in the client's group listing"
        assert (live.protocol_type, live.state.lower(), live.protocol) == ("consumer", "stable", "range"), (
            live
        )
        assert live.members == [(name, {topic: [0, 1, 2, 3]})], f"members {live.members}"
        left = d.describe_group(bootstrap, group)
        assert (left.state.lower(), left.members) == ("empty", []), f"after the member left: {left}"
        return None

    run_for_clients(matrix, "list-describe-groups", drivers, body)
