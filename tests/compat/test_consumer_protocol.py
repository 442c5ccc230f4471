"""The KIP-848 consumer group protocol: a group of new-protocol members of one client, rebalanced by
the broker's assignor, consumes each record once and is a `consumer` group to the admin API."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import Consumer, Driver
from tests.compat.groups import consumed, stop_all, wait_balanced, wait_consumed
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import group_for, slug, topic_for
from tests.compat.records import Rec, assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker

PARTITIONS = 6


def test_new_protocol_group_rebalances_and_consumes_each_record_once(
    matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker
) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic, group = topic_for("kip848", d), group_for("kip848", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        everyone: list[Consumer] = []
        sent: list[Rec] = []

        def join(i: int) -> Consumer:
            member = d.new_protocol_member(bootstrap, group, topic, f"{slug(d)}-kip848-{i}").start()
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
            assert d.group_type(bootstrap, group) == "consumer"
            leaving = members.pop(0)
            leaving.stop()
            produce("after-leave")  # while the broker moves the leaver's partitions
            wait_balanced(members, PARTITIONS, "two members after one left")
            wait_consumed(everyone, sent)
            members.append(join(3))
            produce("after-join")  # while the others give the newcomer its share
            wait_balanced(members, PARTITIONS, "three members after one joined")
            wait_consumed(everyone, sent)
        finally:
            stop_all([m for m in everyone if not m.feed.closed.is_set()])
        assert_exactly_once(sent, consumed(everyone))
        ends = ref.end_offsets(bootstrap, topic, PARTITIONS)
        committed = ref.committed(bootstrap, group, topic, PARTITIONS)
        assert committed == ends, f"committed offsets {committed} are not the end offsets {ends}"
        return None

    run_for_clients(matrix, "consumer-protocol", drivers, body)
