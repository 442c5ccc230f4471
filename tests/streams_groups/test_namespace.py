"""A streams group's id is taken for every other group type, as Kafka 4.4 answers: ConsumerGroupHeartbeat
and ConsumerGroupDescribe are GROUP_ID_NOT_FOUND "Group g is not a consumer group.", JoinGroup is
INCONSISTENT_GROUP_PROTOCOL, ShareGroupHeartbeat is "not a share group"; and a streams group whose
partition moves away is forgotten with its timers."""

from __future__ import annotations

from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.protocol.errors import ErrorCode
from tests.streams_groups.harness import App, Harness
from tests.streams_groups.test_wire import join
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient


def test_other_group_types_are_refused_a_streams_groups_id(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "words", 2)
    with WireClient(broker.bootstrap) as client:
        assert join(client, "sg", "m1").error_code == ErrorCode.NONE
        consumer = client.request(
            68, 1, group_id="sg", member_id="cm-aaaaaaaaaaaaaaaaaaaaaa", member_epoch=0, instance_id=None,
            rack_id=None, rebalance_timeout_ms=30_000, subscribed_topic_names=["words"],
            subscribed_topic_regex=None, server_assignor=None, topic_partitions=[],
        )  # fmt: skip
        assert (consumer.error_code, consumer.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Group sg is not a consumer group.",
        )
        classic = client.request(
            11, 9, group_id="sg", session_timeout_ms=30_000, rebalance_timeout_ms=30_000, member_id="",
            group_instance_id=None, protocol_type="consumer", protocols=[dict(name="range", metadata=b"")],
            reason=None,
        )  # fmt: skip
        assert classic.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        share = client.request(
            76, 1, group_id="sg", member_id="sm-aaaaaaaaaaaaaaaaaaaaaa", member_epoch=0, rack_id=None,
            subscribed_topic_names=["words"],
        )  # fmt: skip
        assert (share.error_code, share.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Group sg is not a share group.",
        )
        described = client.request(69, 1, group_ids=["sg"], include_authorized_operations=False).groups[0]
        assert (described.error_code, described.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Group sg is not a consumer group.",
        )


def test_an_unloaded_streams_group_is_forgotten_and_its_timers_never_fire() -> None:
    h = Harness(StreamsConfig())  # Kafka's delays: an initial delay timer is running too
    h.topics.create("words", 2)
    h.join(App("a"))
    written = len(h.sink.records)
    h.coordinator.unload_group("wordcount")
    assert h.coordinator.get_streams_group("wordcount") is None
    h.clock.advance(60_000)  # past the initial delay and the session timeout
    assert len(h.sink.records) == written
