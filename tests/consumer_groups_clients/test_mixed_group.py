"""A mixed group with real clients: classic kafka-python and aiokafka members (JoinGroup/SyncGroup) and
a new-protocol confluent-kafka member in one group. The classic group converts to a consumer group when
the new-protocol member joins, the broker's assignor assigns the classic members too, every record is
consumed exactly once, and the group converts back to classic when the last new-protocol member leaves.

The members are the compatibility suite's drivers (tests/compat/clients): each commits synchronously
after processing, in its client's idiom."""

from __future__ import annotations

from collections.abc import Callable

from kafkito.protocol.errors import ErrorCode
from tests.compat import reference as ref
from tests.compat.clients.aiokafka_client import AIOKafkaDriver
from tests.compat.clients.base import Consumer
from tests.compat.clients.confluent_client import ConfluentDriver
from tests.compat.clients.kafka_python_client import KafkaPythonDriver
from tests.compat.groups import consumed, stop_all, wait_balanced, wait_consumed
from tests.compat.records import Rec, assert_exactly_once, numbered
from tests.support.brokers import ProcessBroker
from tests.support.waiting import DEADLINE_S, wait_until
from tests.support.wire import WireClient

PARTITIONS = 6
TOPIC = "mixed"
GROUP = "mixed-group"


def group_type(bootstrap: str) -> tuple[str, str] | None:
    """(group type, protocol type) as ListGroups v5 lists the group, None when it is not listed."""
    with WireClient(bootstrap) as client:
        response = client.request(16, 5, states_filter=[], types_filter=[])
    assert response.error_code == ErrorCode.NONE
    listed = {g.group_id: (g.group_type, g.protocol_type) for g in response.groups}
    return listed.get(GROUP)


def member_types(bootstrap: str) -> list[int]:
    """The member types (0 classic, 1 consumer) ConsumerGroupDescribe v1 shows, sorted."""
    with WireClient(bootstrap) as client:
        response = client.request(69, 1, group_ids=[GROUP], include_authorized_operations=False)
    (group,) = response.groups
    return sorted(m.member_type for m in group.members) if group.error_code == ErrorCode.NONE else []


def test_classic_members_and_a_new_protocol_member_share_a_group(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    broker = broker_process(
        group_initial_rebalance_delay_ms=0,
        group_consumer_min_heartbeat_interval_ms=200,
        group_consumer_heartbeat_interval_ms=300,
    )
    bootstrap = broker.bootstrap
    ref.create_topic(bootstrap, TOPIC, PARTITIONS)
    everyone: list[Consumer] = []
    sent: list[Rec] = []

    def produce(tag: str) -> None:
        batch = numbered(tag, 60, PARTITIONS, start=len(sent))
        ref.produce(bootstrap, TOPIC, batch)
        sent.extend(batch)

    def start(member: Consumer) -> Consumer:
        everyone.append(member.start())
        return member

    try:
        kafka_python = start(KafkaPythonDriver().member(bootstrap, GROUP, TOPIC, "classic-kafka-python"))
        aiokafka = start(AIOKafkaDriver().member(bootstrap, GROUP, TOPIC, "classic-aiokafka"))
        wait_balanced([kafka_python, aiokafka], PARTITIONS, "two classic members")
        assert group_type(bootstrap) == ("classic", "consumer")
        produce("classic")
        wait_consumed(everyone, sent)

        confluent = start(ConfluentDriver().new_protocol_member(bootstrap, GROUP, TOPIC, "new-protocol"))
        produce("joining")  # while the group converts and the broker's assignor moves partitions
        wait_balanced([kafka_python, aiokafka, confluent], PARTITIONS, "two classic members and a new one")
        assert group_type(bootstrap) == ("consumer", "consumer")
        assert member_types(bootstrap) == [0, 0, 1]
        wait_consumed(everyone, sent)
        produce("mixed")
        wait_consumed(everyone, sent)

        confluent.stop()  # the last new-protocol member leaves: the group is classic again
        wait_until(
            lambda: group_type(bootstrap) == ("classic", "consumer"), DEADLINE_S,
            "the group to convert back to classic",
            detail=lambda: f"listed as {group_type(bootstrap)}, member types {member_types(bootstrap)}",
        )  # fmt: skip
        produce("classic-again")
        wait_balanced([kafka_python, aiokafka], PARTITIONS, "the classic members after the conversion back")
        wait_consumed(everyone, sent)
    finally:
        stop_all([m for m in everyone if not m.feed.closed.is_set()])
    assert_exactly_once(sent, consumed(everyone))
    ends = ref.end_offsets(bootstrap, TOPIC, PARTITIONS)
    assert ref.committed(bootstrap, GROUP, TOPIC, PARTITIONS) == ends
