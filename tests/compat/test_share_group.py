"""The share-group row (KIP-932): two share consumers of one group split a topic's records, each
delivered once, and every record ends acknowledged; in explicit mode a released record goes to another
member with delivery count 2 and a rejected one to none. That every record is acknowledged is read back
with raw DescribeShareGroupOffsets v1 requests as Kafka 4.4 shows it: lag 0 in every partition (KIP-1226:
the log end less the persisted start offset and the records past it whose delivery is complete). The
persisted start offset itself is no sign of it: it moves with the share state's next write, so after
the last acknowledgement it may still be 0 (as it is on Kafka)."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import Consumer, Driver, wait_for_consumers
from tests.compat.groups import consumed, stop_all, wait_consumed
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import group_for, slug, topic_for
from tests.compat.records import assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

PARTITIONS = 3
DESCRIBE_OFFSETS = 90  # DescribeShareGroupOffsets


def share_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    """The group's (start offset, lag) of each partition of `topic` (-1, -1: not initialized)."""
    asked = [dict(topic_name=topic, partitions=list(range(partitions)))]
    with WireClient(bootstrap) as wire:
        (described,) = wire.request(DESCRIBE_OFFSETS, 1, groups=[dict(group_id=group, topics=asked)]).groups
    assert described.error_code == 0, f"DescribeShareGroupOffsets {group}: error {described.error_code}"
    return {p.partition_index: (p.start_offset, p.lag) for t in described.topics for p in t.partitions}


def acknowledged(offsets: dict[int, tuple[int, int]], ends: dict[int, int]) -> bool:
    """Every partition initialized, its start offset within its log, and no lag."""
    return offsets.keys() == ends.keys() and all(
        0 <= start <= ends[p] and lag == 0 for p, (start, lag) in offsets.items()
    )


def wait_acknowledged(
    bootstrap: str, group: str, topic: str, partitions: int, members: list[Consumer]
) -> None:
    ends = ref.end_offsets(bootstrap, topic, partitions)
    wait_for_consumers(
        lambda: acknowledged(share_offsets(bootstrap, group, topic, partitions), ends),
        f"{group}'s lag 0 in every partition (log ends {ends})",
        members,
    )


def _implicit(d: Driver, bootstrap: str) -> None:
    topic, group = topic_for("share", d), group_for("share", d)
    ref.create_topic(bootstrap, topic, PARTITIONS)
    sent = numbered("share", 60, PARTITIONS)
    ref.produce(bootstrap, topic, sent)
    d.set_group_config(bootstrap, group, "share.auto.offset.reset", "earliest")
    members = [d.share_member(bootstrap, group, topic, f"{slug(d)}-share-{i}").start() for i in range(2)]
    try:
        wait_consumed(members, sent)
    finally:
        stop_all(members)  # leaving accepts the last records each was handed
    assert_exactly_once(sent, consumed(members))
    counts = {count for m in members for _, _, count in m.feed.deliveries}
    assert counts == {1}, f"delivery counts {counts}: a record was delivered twice"
    wait_acknowledged(bootstrap, group, topic, PARTITIONS, members)


def _release_and_reject(d: Driver, bootstrap: str) -> None:
    topic, group = topic_for("share-explicit", d), group_for("share-explicit", d)
    ref.create_topic(bootstrap, topic, 1)  # every member of the group is assigned the one partition
    ref.produce(bootstrap, topic, numbered("share-explicit", 3, 1))
    d.set_group_config(bootstrap, group, "share.auto.offset.reset", "earliest")
    acks = {(0, 0): "release", (0, 1): "reject"}  # offset 2 is accepted
    first = d.share_member(bootstrap, group, topic, f"{slug(d)}-explicit", acks).start()
    everyone = [first]
    try:
        wait_for_consumers(
            lambda: {o for _, o, _ in first.feed.deliveries} >= {0, 1}, "the first member's records", everyone
        )
        second = d.share_member(bootstrap, group, topic, f"{slug(d)}-second").start()
        everyone.append(second)
        wait_for_consumers(lambda: bool(second.feed.deliveries), "a record for the second member", everyone)
        # Once all three are complete (no lag), the rejected record can never be delivered again.
        wait_acknowledged(bootstrap, group, topic, 1, everyone)
    finally:
        stop_all(everyone)
    handed = first.feed.deliveries + second.feed.deliveries
    assert {c for _, o, c in first.feed.deliveries} == {1}, f"first member: {first.feed.deliveries}"
    # The release: record 0 comes to the second member once, as a redelivery. Its count is 2, or more
    # when the first member's client had fetched it again ahead of its application and released it
    # as it closed (a client's prefetch; Kafka counts that acquisition too).
    again = [c for _, o, c in second.feed.deliveries if o == 0]
    assert len(again) == 1 and again[0] >= 2, handed
    assert [c for _, o, c in handed if o == 1] == [1], handed  # the reject: never again
    assert [c for _, o, c in handed if o == 2] == [1], handed  # the accepted record: once


def test_share_group(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    def body(d: Driver) -> str | None:
        _implicit(d, compat_broker.bootstrap)
        _release_and_reject(d, compat_broker.bootstrap)
        return None

    run_for_clients(matrix, "share-group", drivers, body)
