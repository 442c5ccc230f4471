"""ShareGroupHeartbeat (76), ShareGroupDescribe (77), ListGroups, DescribeGroups, DeleteGroups and the
share-group offset APIs (90-92) as raw requests over TCP to a real broker."""

from __future__ import annotations

import uuid
from typing import Any

from kafkito.protocol.errors import ErrorCode
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

HEARTBEAT, DESCRIBE = 76, 77


def beat(client: WireClient, group: str, member: str, epoch: int, topics: list[str] | None = None) -> Any:
    return client.request(
        HEARTBEAT, 1, group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
        subscribed_topic_names=topics,
    )  # fmt: skip


def test_api_versions_advertise_the_share_group_apis(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        r = client.request(18, 3, client_software_name="t", client_software_version="1")
    ranges = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert ranges[76] == (1, 1) and ranges[77] == (1, 1)
    assert ranges[90] == (0, 1) and ranges[91] == (0, 0) and ranges[92] == (0, 0)


def test_join_share_assignment_and_describe(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-wire", 3)
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        first = beat(client, "sg", m1, 0, ["share-wire"])
        assert (first.error_code, first.member_id, first.member_epoch) == (0, m1, 1)
        assert first.heartbeat_interval_ms == 5000
        (topic,) = first.assignment.topic_partitions
        assert sorted(topic.partitions) == [0, 1, 2]
        second = beat(client, "sg", m2, 0, ["share-wire"])
        assert second.member_epoch == 2 and second.assignment is not None
        again = beat(client, "sg", m1, 1)
        assert again.member_epoch == 2
        got = sorted(
            again.assignment.topic_partitions[0].partitions + second.assignment.topic_partitions[0].partitions
        )
        assert got == [0, 1, 2]
        steady = beat(client, "sg", m1, 2)
        assert (steady.error_code, steady.assignment) == (0, None)

        described = client.request(
            DESCRIBE, 1, group_ids=["sg", "nope", ""], include_authorized_operations=True
        )
        sg, nope, empty = described.groups
        assert (sg.error_code, sg.group_state, sg.group_epoch, sg.assignment_epoch, sg.assignor_name) == (
            0, "Stable", 2, 2, "simple",
        )  # fmt: skip
        assert sorted(m.member_id for m in sg.members) == sorted([m1, m2])
        member = next(m for m in sg.members if m.member_id == m1)
        assert member.subscribed_topic_names == ["share-wire"] and member.client_host.startswith("/")
        assert member.assignment.topic_partitions[0].topic_name == "share-wire"
        assert sg.authorized_operations != -(2**31)
        assert (nope.error_code, nope.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND,
            "Group nope not found.",
        )
        assert empty.error_code == ErrorCode.INVALID_GROUP_ID

        listed = client.request(16, 5, states_filter=[], types_filter=["share"])
        assert [(g.group_id, g.group_state, g.group_type, g.protocol_type) for g in listed.groups] == [
            ("sg", "Stable", "share", "share")
        ]
        assert client.request(42, 2, groups_names=["sg"]).results[0].error_code == ErrorCode.NON_EMPTY_GROUP
        assert beat(client, "sg", m1, -1).member_epoch == -1
        assert beat(client, "sg", m2, -1).member_epoch == -1
        assert client.request(16, 5, states_filter=["empty"], types_filter=[]).groups[0].group_id == "sg"
        assert client.request(42, 2, groups_names=["sg"]).results[0].error_code == ErrorCode.NONE
        gone = client.request(DESCRIBE, 1, group_ids=["sg"], include_authorized_operations=False)
        assert gone.groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_heartbeat_errors(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-errors", 1)
    member = str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        bad = beat(client, "sg-e", member, 0, None)
        assert (bad.error_code, bad.error_message) == (
            ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.",
        )  # fmt: skip
        assert (bad.member_id, bad.member_epoch, bad.assignment) == (None, 0, None)
        assert beat(client, "sg-e", "", 0, ["share-errors"]).error_code == ErrorCode.INVALID_REQUEST
        assert beat(client, "sg-e", member, 3).error_code == ErrorCode.GROUP_ID_NOT_FOUND
        assert beat(client, "sg-e", member, 0, ["share-errors"]).error_code == 0
        assert beat(client, "sg-e", member, 7).error_code == ErrorCode.FENCED_MEMBER_EPOCH
        assert beat(client, "sg-e", "other", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_one_namespace_with_classic_and_consumer_groups(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-ns", 1)
    member = str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        assert beat(client, "ns-share", member, 0, ["share-ns"]).error_code == 0
        consumer = client.request(
            68, 1, group_id="ns-share", member_id=member, member_epoch=0, instance_id=None, rack_id=None,
            rebalance_timeout_ms=30_000, subscribed_topic_names=["share-ns"], subscribed_topic_regex=None,
            server_assignor=None, topic_partitions=[],
        )  # fmt: skip
        assert (consumer.error_code, consumer.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group ns-share is not a consumer group.",
        )  # fmt: skip
        described = client.request(69, 1, group_ids=["ns-share"], include_authorized_operations=False)
        assert described.groups[0].error_message == "Group ns-share is not a consumer group."
        joined = client.request(
            11, 5, group_id="ns-share", session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
            group_instance_id=None, protocol_type="consumer", protocols=[dict(name="range", metadata=b"")],
        )  # fmt: skip
        assert joined.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        old = client.request(15, 5, groups=["ns-share"], include_authorized_operations=False).groups[0]
        assert (old.error_code, old.group_state) == (0, "Dead")
        new = client.request(15, 6, groups=["ns-share"], include_authorized_operations=False).groups[0]
        assert (new.error_code, new.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group ns-share is not a classic group.",
        )  # fmt: skip
        # A consumer group's id is not a share group's.
        client.request(
            68, 1, group_id="ns-consumer", member_id=member, member_epoch=0, instance_id=None, rack_id=None,
            rebalance_timeout_ms=30_000, subscribed_topic_names=["share-ns"], subscribed_topic_regex=None,
            server_assignor=None, topic_partitions=[],
        )  # fmt: skip
        refused = beat(client, "ns-consumer", member, 0, ["share-ns"])
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group ns-consumer is not a share group.",
        )  # fmt: skip
        described = client.request(
            DESCRIBE, 1, group_ids=["ns-consumer"], include_authorized_operations=False
        )
        assert described.groups[0].error_message == "Group ns-consumer is not a share group."


def test_offset_apis_of_unknown_groups(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        # Kafka's Describe asks the share-state persister whatever the group: nothing, no error.
        r = client.request(90, 1, groups=[dict(group_id="nobody", topics=None)])
        assert (r.groups[0].error_code, r.groups[0].topics) == (ErrorCode.NONE, [])
        # Alter with nothing to alter writes no record, so creates no group.
        r = client.request(91, 0, group_id="nobody", topics=[])
        assert (r.error_code, r.responses) == (ErrorCode.NONE, [])
        r = client.request(92, 0, group_id="nobody", topics=[dict(topic_name="x")])
        assert (r.error_code, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nobody not found.")
        assert client.request(16, 5, states_filter=[], types_filter=["share"]).groups == []


def test_alter_offsets_of_a_group_that_never_had_a_member(broker: ThreadBroker) -> None:
    """franz-go's TestShareGroupOffsetsAdmin: Alter on a fresh id creates the empty share group and
    its share state; Describe reads it back; Delete forgets it, and a second Delete finds nothing."""
    create_topic(broker.bootstrap, "share-fresh", 2)
    with WireClient(broker.bootstrap) as client:
        reset = [
            dict(
                topic_name="share-fresh", partitions=[dict(partition_index=p, start_offset=0) for p in (0, 1)]
            )
        ]
        altered = client.request(91, 0, group_id="fresh", topics=reset)
        assert (altered.error_code, altered.error_message) == (ErrorCode.NONE, None)
        assert [(p.partition_index, p.error_code) for p in altered.responses[0].partitions] == [
            (0, 0),
            (1, 0),
        ]
        listed = client.request(16, 5, states_filter=[], types_filter=["share"]).groups
        assert [(g.group_id, g.group_state) for g in listed] == [("fresh", "Empty")]
        described = client.request(DESCRIBE, 1, group_ids=["fresh"], include_authorized_operations=False)
        assert (described.groups[0].error_code, described.groups[0].members) == (0, [])
        everything = client.request(90, 1, groups=[dict(group_id="fresh", topics=None)]).groups[0]
        (topic,) = everything.topics
        assert topic.topic_name == "share-fresh"
        assert [(p.partition_index, p.start_offset, p.error_code) for p in topic.partitions] == [
            (0, 0, 0),
            (1, 0, 0),
        ]
        deleted = client.request(92, 0, group_id="fresh", topics=[dict(topic_name="share-fresh")])
        assert (deleted.error_code, deleted.responses[0].error_code) == (0, 0)
        again = client.request(92, 0, group_id="fresh", topics=[dict(topic_name="share-fresh")])
        assert (again.responses[0].error_code, again.responses[0].error_message) == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete.",
        )  # fmt: skip
        asked = [dict(topic_name="share-fresh", partitions=[0])]
        gone = client.request(90, 1, groups=[dict(group_id="fresh", topics=asked)]).groups[0]
        assert gone.topics[0].partitions[0].start_offset == -1


def test_alter_offsets_of_another_group_type_is_refused(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-typed", 1)
    with WireClient(broker.bootstrap) as client:
        client.request(
            68, 1, group_id="typed-consumer", member_id=str(uuid.uuid4()), member_epoch=0, instance_id=None,
            rack_id=None, rebalance_timeout_ms=30_000, subscribed_topic_names=["share-typed"],
            subscribed_topic_regex=None, server_assignor=None, topic_partitions=[],
        )  # fmt: skip
        reset = [dict(topic_name="share-typed", partitions=[dict(partition_index=0, start_offset=0)])]
        refused = client.request(91, 0, group_id="typed-consumer", topics=reset)
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group typed-consumer is not a share group.",
        )  # fmt: skip
        deleted = client.request(92, 0, group_id="typed-consumer", topics=[dict(topic_name="share-typed")])
        assert deleted.error_message == "Group typed-consumer is not a share group."
        asked = [dict(topic_name="share-typed", partitions=[0])]
        described = client.request(90, 1, groups=[dict(group_id="typed-consumer", topics=asked)]).groups[0]
        assert (described.error_code, described.topics[0].partitions[0].start_offset) == (0, -1)


def test_share_version_zero_turns_share_groups_off(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-off", 1)

    def update(level: int, upgrade_type: int) -> int:
        with WireClient(broker.bootstrap) as client:
            update = dict(feature="share.version", max_version_level=level, upgrade_type=upgrade_type)
            r = client.request(57, 1, timeout_ms=1000, feature_updates=[update], validate_only=False)
        return int(r.error_code)

    with WireClient(broker.bootstrap) as client:
        r = client.request(18, 4, client_software_name="t", client_software_version="1")
        finalized = {f.name: f.max_version_level for f in r.finalized_features}
        assert finalized["share.version"] == 2
        assert beat(client, "off", str(uuid.uuid4()), 0, ["share-off"]).error_code == 0
        assert update(0, 2) == 0
        off = beat(client, "off", str(uuid.uuid4()), 0, ["share-off"])
        assert (off.error_code, off.error_message) == (
            ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.",
        )  # fmt: skip
        described = client.request(DESCRIBE, 1, group_ids=["off"], include_authorized_operations=False)
        assert described.groups[0].error_code == ErrorCode.UNSUPPORTED_VERSION
        offsets = client.request(90, 1, groups=[dict(group_id="off", topics=None)])
        assert offsets.groups[0].error_code == ErrorCode.UNSUPPORTED_VERSION
        assert client.request(91, 0, group_id="off", topics=[]).error_code == ErrorCode.UNSUPPORTED_VERSION
        assert client.request(92, 0, group_id="off", topics=[]).error_code == ErrorCode.UNSUPPORTED_VERSION
        assert update(1, 1) == 0
        assert beat(client, "off", str(uuid.uuid4()), 0, ["share-off"]).error_code == 0


def test_offset_apis_name_unknown_topics_per_partition(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "share-known", 1)
    member = str(uuid.uuid4())
    with WireClient(broker.bootstrap) as client:
        beat(client, "sg-o", member, 0, ["share-known"])
        assert beat(client, "sg-o", member, -1).error_code == 0
        asked = [
            dict(topic_name="nowhere", partitions=[0, 1]),
            dict(topic_name="share-known", partitions=[0]),
        ]
        for version in (0, 1):
            group = client.request(90, version, groups=[dict(group_id="sg-o", topics=asked)]).groups[0]
            nowhere, known = group.topics
            # Kafka: an unknown topic has no share state, which is not an error.
            assert [(p.error_code, p.start_offset) for p in nowhere.partitions] == [(0, -1)] * 2
            assert (known.partitions[0].error_code, known.partitions[0].start_offset) == (0, 0)
        reset = [
            dict(topic_name="nowhere", partitions=[dict(partition_index=0, start_offset=1)]),
            dict(topic_name="share-known", partitions=[dict(partition_index=5, start_offset=1)]),
        ]
        altered = client.request(91, 0, group_id="sg-o", topics=reset)
        assert altered.error_code == 0
        codes = [p.error_code for t in altered.responses for p in t.partitions]
        assert codes == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] * 2
        deleted = client.request(92, 0, group_id="sg-o", topics=[dict(topic_name="nowhere")])
        assert deleted.responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        other = client.request(90, 1, groups=[dict(group_id="", topics=None)]).groups[0]
        assert other.error_code == ErrorCode.INVALID_GROUP_ID
